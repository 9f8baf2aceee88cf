import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';

class FieldErrorDto {
  @ApiProperty({ description: 'The field (a dotted path for nested ones)', example: 'email' }) field: string;
  @ApiProperty({ type: [String], example: ['email must be an email'] }) messages: string[];
}

class ErrorBodyDto {
  @ApiProperty({ example: 'Company not found' }) msg: string;
  @ApiPropertyOptional({
    type: [FieldErrorDto],
    description: 'Validation failures only: the fields refused, at most 20',
  })
  details?: FieldErrorDto[];
  @ApiPropertyOptional({
    type: 'integer',
    description: 'How many more field errors there were beyond the 20 listed in details',
    example: 3,
  })
  omittedDetails?: number;
}

/** The failure envelope (src/common/http/envelope.ts). OpenAPI 3.0 has no null type: `data` is a nullable object. */
export class ErrorEnvelopeDto {
  @ApiProperty({ enum: ['failed'] }) status: 'failed';
  @ApiProperty({ type: 'integer', description: 'The HTTP status of the response', example: 404 })
  code: number;
  @ApiProperty({ example: 'Company not found' }) msg: string;
  @ApiProperty({
    type: 'object',
    properties: {},
    nullable: true,
    description: 'Always null on a failure',
    example: null,
  })
  data: null;
  @ApiProperty({ type: ErrorBodyDto }) error: ErrorBodyDto;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed body, failed validation or unknown fields',
  401: 'Missing, malformed, expired or badly signed credential',
  403: 'Valid credential, but not allowed',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Understood, but refused by a rule of the domain',
  429: 'Rate limit hit or quota exhausted (see retry-after)',
  502: 'An outside system (payment gateway, CRM) refused or failed',
  503: 'A required outside system is not configured or is down',
  504: 'An outside system did not answer in time',
};

/** Documents the success envelope whose `data` is `model` (or an empty object). */
export function ApiEnvelope(model?: Type<unknown>, status = 200, description = 'Success') {
  const data = model ? { $ref: getSchemaPath(model) } : { type: 'object', properties: {} };
  return applyDecorators(
    ApiExtraModels(...(model ? [model] : [])),
    ApiResponse({
      status,
      description,
      schema: {
        type: 'object',
        required: ['status', 'code', 'msg', 'data'],
        properties: {
          status: { type: 'string', enum: ['success'] },
          code: { type: 'integer', example: status },
          msg: { type: 'string' },
          data,
        },
      },
    }),
  );
}

/** A message the service really answers with each status, for the documented examples. */
const ERROR_EXAMPLES: Record<number, { msg: string; details?: FieldErrorDto[] }> = {
  400: { msg: 'Validation failed', details: [{ field: 'email', messages: ['email must be an email'] }] },
  401: { msg: 'Missing bearer token' },
  403: { msg: 'Only the company owner may do this' },
  404: { msg: 'Not found' },
  409: { msg: 'Domain limit reached: a company has at most 50 domains' },
  413: { msg: 'Request body is too large' },
  415: { msg: 'Unsupported media type' },
  422: { msg: 'Sender domain not verified' },
  429: { msg: 'Too many requests, try again later' },
  502: { msg: 'Payment gateway is unreachable' },
  503: { msg: 'Database is down' },
  504: { msg: 'Payment gateway did not answer in time' },
};

/** The failure envelope of `status`, as an example. */
function errorExample(status: number) {
  const { msg, details } = ERROR_EXAMPLES[status] ?? { msg: 'Error' };
  return { status: 'failed', code: status, msg, data: null, error: { msg, ...(details && { details }) } };
}

/** Documents failure envelopes for the given statuses, each with an example of its own. */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
            example: errorExample(status),
          },
        },
      }),
    ),
  );
}
