import { ArgumentMetadata, BadRequestException, Injectable, ValidationPipe } from '@nestjs/common';
import { ValidationFailedException } from '../errors/validation-failed.exception';

const MAX_DEPTH = 32;

/**
 * The global validation pipe: whitelist + forbidNonWhitelisted (unknown fields are a 400),
 * query strings converted to their declared number/boolean types, body strings trimmed, and
 * NUL bytes or absurd nesting refused before class-validator runs.
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
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      value = sanitize(value, 0, metadata.type === 'body');
    }
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject && this.toValidate(metadata)) {
      throw new BadRequestException('Request body must be a JSON object');
    }
    return super.transform(value, metadata);
  }
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
