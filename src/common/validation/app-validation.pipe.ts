import { ArgumentMetadata, BadRequestException, Injectable, Type, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { ValidationFailedException } from '../errors/validation-failed.exception';
import type { FieldErrorDetail } from '../http/envelope';
import { OversizedJsonObject } from '../http/oversized-json';
import { fastBodyCheckOf } from './fast-path';

const MAX_DEPTH = 32;

/**
 * The global validation pipe: whitelist + forbidNonWhitelisted (unknown fields are a 400),
 * query strings converted to their declared number/boolean types, body strings trimmed, and
 * NUL bytes or absurd nesting refused before class-validator runs.
 *
 * Refusing a body costs time linear in its size and small (README.md "Bodies"): before
 * class-transformer and class-validator see it (the first handles keys in quadratic time, both
 * walk every array element), unknown fields are taken out in one pass, and a value that cannot
 * be valid is cut down to what still proves it invalid (see `bounded`).
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      stopAtFirstError: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => ValidationFailedException.fromErrors(errors),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && value === undefined) value = {};
    const dto = metadata.metatype && this.toValidate(metadata) ? metadata.metatype : undefined;
    if (value instanceof OversizedJsonObject) throw refuseOversized(value, dto);
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject && dto) {
      throw new BadRequestException('Request body must be a JSON object');
    }
    if (isObject && dto && metadata.type === 'body') {
      const fast = fastBodyCheckOf(dto);
      if (fast?.(value as Record<string, unknown>)) return value;
    }
    let unknown: UnknownFields | undefined;
    if (isObject && dto) {
      const split = splitFields(value as Record<string, unknown>, dto);
      value = split.known;
      if (split.unknown.count > 0) unknown = split.unknown;
    }
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      value = sanitize(value, 0, metadata.type === 'body');
    }
    if (isObject && dto) value = boundFields(value as Record<string, unknown>, dto);
    if (!unknown) return super.transform(value, metadata);
    let others: ValidationFailedException | undefined;
    try {
      await super.transform(value, metadata);
    } catch (e) {
      if (!(e instanceof ValidationFailedException)) throw e;
      others = e;
    }
    throw new ValidationFailedException(unknown.details, unknown.count, others);
  }
}

/** What a DTO declares of one field, for cutting a hopeless value down before validation. */
interface FieldShape {
  /** Declared as a string, number or boolean: an array or object there is invalid whatever it holds. */
  scalar: boolean;
  /** From @ArrayMaxSize: a longer array is invalid whatever its elements are. */
  maxItems?: number;
}

interface UnknownFields {
  /** The first details (as many as the envelope lists), as class-validator words them. */
  details: FieldErrorDetail[];
  count: number;
}

const SCALAR_TYPES = new Set<unknown>([String, Number, Boolean]);
const shapesByClass = new WeakMap<Type<unknown>, Map<string, FieldShape>>();

/** The fields a DTO declares (those with a class-validator decorator, as its whitelist sees them), with their shapes. */
function fieldShapes(dto: Type<unknown>): Map<string, FieldShape> {
  let shapes = shapesByClass.get(dto);
  if (shapes) return shapes;
  shapes = new Map();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false)) {
    const shape = shapes.get(m.propertyName) ?? {
      scalar: SCALAR_TYPES.has(Reflect.getMetadata('design:type', dto.prototype as object, m.propertyName)),
    };
    if (m.name === 'arrayMaxSize' && typeof m.constraints?.[0] === 'number')
      shape.maxItems = m.constraints[0];
    shapes.set(m.propertyName, shape);
  }
  shapesByClass.set(dto, shapes);
  return shapes;
}

/**
 * A value that fails its field whatever it holds is validated as a small stand-in of the same
 * kind, which gets the same messages: an array or object in a scalar field as `{}` or `[]`, an
 * array over its @ArrayMaxSize as its first max + 1 elements.
 */
function bounded(value: unknown, shape: FieldShape): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (shape.scalar) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value) && shape.maxItems !== undefined && value.length > shape.maxItems + 1) {
    return value.slice(0, shape.maxItems + 1);
  }
  return value;
}

/** The declared fields, each bounded (after sanitize, which still sees everything: NUL bytes, depth). */
function boundFields(fields: Record<string, unknown>, dto: Type<unknown>): Record<string, unknown> {
  const shapes = fieldShapes(dto);
  for (const key of Object.keys(fields)) fields[key] = bounded(fields[key], shapes.get(key)!);
  return fields;
}

/** One pass over the body: its declared fields, and its unknown ones (20 listed, all counted). */
function splitFields(
  body: Record<string, unknown>,
  dto: Type<unknown>,
): { known: Record<string, unknown>; unknown: UnknownFields } {
  const shapes = fieldShapes(dto);
  const known: Record<string, unknown> = {};
  const unknown: UnknownFields = { details: [], count: 0 };
  for (const key of Object.keys(body)) {
    if (shapes.has(key)) {
      known[key] = body[key];
      continue;
    }
    if (key.includes('\u0000')) throw new BadRequestException('Field names must not contain NUL bytes');
    if (unknown.details.length < ValidationFailedException.MAX_DETAILS) {
      unknown.details.push({ field: key, messages: [`property ${key} should not exist`] });
    }
    unknown.count++;
  }
  return { known, unknown };
}

/** A body the parser did not build (too many fields): which of them are unknown, as for any body. */
function refuseOversized(body: OversizedJsonObject, dto: Type<unknown> | undefined): Error {
  if (!dto) return body.tooManyFields();
  const shapes = fieldShapes(dto);
  const unknown: UnknownFields = { details: [], count: 0 };
  for (const name of body.fieldNames) {
    if (shapes.has(name)) continue;
    if (unknown.details.length < ValidationFailedException.MAX_DETAILS) {
      unknown.details.push({ field: name, messages: [`property ${name} should not exist`] });
    }
    unknown.count++;
  }
  return unknown.count > 0
    ? new ValidationFailedException(unknown.details, unknown.count)
    : body.tooManyFields();
}

function sanitize(value: unknown, depth: number, trim: boolean): unknown {
  if (depth > MAX_DEPTH) throw new BadRequestException('Request body is nested too deeply');
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new BadRequestException('Strings must not contain NUL bytes');
    return trim ? value.trim() : value;
  }
  if (Array.isArray(value)) return value.map((v) => sanitize(v, depth + 1, trim));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) throw new BadRequestException('Field names must not contain NUL bytes');
      out[k] = sanitize(v, depth + 1, trim);
    }
    return out;
  }
  return value;
}
