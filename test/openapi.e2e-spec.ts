import SwaggerParser from '@apidevtools/swagger-parser';
import { EnvelopeRouteConfig } from '../src/common/http/response-message.decorator';
import { OPENAPI_TAGS } from '../src/common/swagger/openapi-tags';
import { createTestApp, TestApp } from './support/test-app';
import { TestControllersModule } from './support/test-controllers';

/**
 * endpoints.md: every route appears in the OpenAPI document at /api-docs-json with its
 * security, body schema, result schema (inside the envelope) and error responses.
 */

/** Routes without a credential (endpoints.md), plus the public test-only error routes. */
const PUBLIC = new Set([
  'POST /api/v1/users/register',
  'POST /api/v1/users/accept-invite',
  'POST /api/v1/users/login',
  'POST /api/v1/users/verify-email',
  'POST /api/v1/users/resend-verification',
  'POST /api/v1/users/forgot-password',
  'POST /api/v1/users/reset-password',
  'POST /api/v1/admins/login',
  'POST /api/v1/admins/forgot-password',
  'POST /api/v1/admins/reset-password',
  'GET /health',
  'GET /health/live',
  'GET /public/company/script/:token',
  'GET /api/v1/get-token',
  'GET /test/errors/crash',
  'GET /test/errors/bad-sql',
  'POST /test/errors/unique-violation',
]);

/**
 * Operations with no error response of their own: /health/live takes no input, no credential,
 * does no I/O and is not rate limited, so nothing it could refuse is left to document.
 */
const NO_ERROR_RESPONSES = new Set(['GET /health/live']);

/** Responses that are not the envelope (README.md, "Exceptions"): uploaded files served back as they are. */
const FILE_DOWNLOADS = new Set([
  'GET /api/v1/billings/:uuid/proof',
  'GET /api/v1/admins/billings/:uuid/proof',
  'GET /api/v1/suppression/export',
  'GET /api/v1/reports/logs/export',
  'GET /public/company/script/:token',
  // Not a file: the Prometheus text format.
  'GET /metrics',
]);

/** Multipart uploads (the file in field `file`) instead of a JSON body. */
const MULTIPART_UPLOADS = new Set(['POST /api/v1/billings/:uuid/proof']);

/** Routes that answer 201 when they create and 200 when the resource already existed (endpoints.md). */
const CREATE_OR_EXISTING = new Set([
  'POST /api/v1/companies/:companyUuid/users',
  'POST /api/v1/billings',
  'POST /api/v1/suppression',
  'POST /api/v1/admins/suppression',
  'POST /api/v1/spamming-mail',
  // 202 stored, or 200 the first answer to an Idempotency-Key given again.
  'POST /api/v1/emails',
  'POST /api/v1/emails/batch',
  'POST /api/v1/emails/raw',
]);

interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  format?: string;
  items?: Schema;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { description?: string; content?: Record<string, { schema: Schema; example?: unknown }> }
  >;
}

interface OpenApiDocument {
  openapi: string;
  servers?: Array<{ url: string }>;
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> };
}

const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelopeDto';

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let operations: Array<{ key: string; op: Operation }>;

  const schemaOf = (ref: string): Schema => {
    const name = ref.replace('#/components/schemas/', '');
    expect(doc.components.schemas).toHaveProperty([name]);
    return doc.components.schemas[name];
  };

  beforeAll(async () => {
    t = await createTestApp({ imports: [TestControllersModule], smtp: false });
    const res = await t.http().get('/api-docs-json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as OpenApiDocument;
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`,
        op,
      })),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('is an OpenAPI 3 document that lists exactly the routes the router holds', () => {
    expect(doc.openapi).toMatch(/^3\./);
    const routes = [
      ...new Set(
        t.routes
          .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
          .filter((r) => !/^\/api-docs(\/|-json$|-yaml$|$)/.test(r.url))
          .map((r) => `${r.method} ${r.url}`),
      ),
    ].sort();
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(operations.map((o) => o.key).sort()).toEqual(routes);
  });

  it('has every operation declare its envelope: @ResponseMessage, or @RawResponse for files and text', () => {
    const undeclared = operations
      .map((o) => o.key)
      .filter((key) => {
        const route = t.routes.find((r) => `${r.method} ${r.url}` === key);
        const config = (route?.config ?? {}) as EnvelopeRouteConfig;
        return typeof config.responseMessage !== 'string' && config.rawResponse !== true;
      });
    expect(undeclared).toEqual([]);
    const raw = t.routes
      .filter((r) => r.method !== 'HEAD' && (r.config as EnvelopeRouteConfig).rawResponse)
      .map((r) => `${r.method} ${r.url}`);
    expect(raw.sort()).toEqual([...FILE_DOWNLOADS].sort());
  });

  it('declares the security schemes bearer, basic, api-key, callback-token, metrics-token and customer-api-key', () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      basic: { type: 'http', scheme: 'basic' },
      'api-key': { type: 'apiKey', in: 'header', name: 'x-api-key' },
      'callback-token': { type: 'apiKey', in: 'header', name: 'x-callback-token' },
      'metrics-token': { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' },
      'customer-api-key': {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'rk_…',
        description: expect.stringContaining("A company's API key"),
      },
    });
  });

  it('lists security on every non-public operation, and none on public ones', () => {
    const schemes = Object.keys(doc.components.securitySchemes);
    for (const { key, op } of operations) {
      if (PUBLIC.has(key)) {
        expect([key, op.security ?? []]).toEqual([key, []]);
        continue;
      }
      // One scheme, or a user's token or a customer API key (platform.md "Using a key").
      if ((op.security ?? []).length === 2) {
        expect([key, op.security]).toEqual([key, [{ bearer: [] }, { 'customer-api-key': [] }]]);
      } else {
        expect([key, (op.security ?? []).length]).toEqual([key, 1]);
      }
      for (const requirement of op.security ?? []) {
        for (const scheme of Object.keys(requirement)) expect(schemes).toContain(scheme);
      }
    }
    const securityOf = (key: string) => operations.find((o) => o.key === key)?.op.security;
    expect(securityOf('GET /api/v1/users/me')).toEqual([{ bearer: [] }]);
    expect(securityOf('GET /api/v1/domains')).toEqual([{ bearer: [] }, { 'customer-api-key': [] }]);
    expect(securityOf('POST /api/v1/api-keys')).toEqual([{ bearer: [] }]);
    expect(securityOf('PATCH /api/v1/admins/:uuid')).toEqual([{ bearer: [] }]);
    expect(securityOf('POST /api/v1/refresh')).toEqual([{ bearer: [] }]);
    expect(securityOf('POST /test/machine/api-key')).toEqual([{ 'api-key': [] }]);
    expect(securityOf('POST /test/machine/log-shipper-key')).toEqual([{ 'api-key': [] }]);
    expect(securityOf('POST /test/machine/callback-token')).toEqual([{ 'callback-token': [] }]);
    expect(securityOf('POST /test/machine/basic')).toEqual([{ basic: [] }]);
  });

  it('documents a 2xx response of every operation as the success envelope', () => {
    for (const { key, op } of operations) {
      const success = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
      expect([key, success.length]).toEqual([key, CREATE_OR_EXISTING.has(key) ? 2 : 1]);
      const [status, response] = success[0];
      if (FILE_DOWNLOADS.has(key)) {
        const types = Object.keys(response.content ?? {});
        expect([key, types.length > 0, types.includes('application/json')]).toEqual([key, true, false]);
        continue;
      }
      const schema = response.content?.['application/json']?.schema;
      expect(schema).toMatchObject({
        type: 'object',
        required: expect.arrayContaining(['status', 'code', 'msg', 'data']),
        properties: {
          status: { type: 'string', enum: ['success'] },
          code: { type: 'integer', example: Number(status) },
          msg: { type: 'string' },
          data: expect.any(Object),
        },
      });
      const data = schema?.properties?.data as Schema;
      if (data.$ref) {
        const model = schemaOf(data.$ref);
        expect([key, model.type, Object.keys(model.properties ?? {}).length > 0]).toEqual([
          key,
          'object',
          true,
        ]);
      } else {
        expect(data).toEqual({ type: 'object', properties: {} });
      }
    }
    const created = operations.find((o) => o.key === 'POST /api/v1/users/register')?.op;
    expect(Object.keys(created?.responses ?? {})).toContain('201');
  });

  it('gives almost every property of the schemas a realistic example of its type', () => {
    const schemas = doc.components.schemas;
    const properties = Object.values(schemas).flatMap((schema) => Object.entries(schema.properties ?? {}));
    const scalars = properties.filter(([, p]) => !p.$ref && !(p as { allOf?: unknown }).allOf);
    const withExample = scalars.filter(([, p]) => (p as { example?: unknown }).example !== undefined);
    expect(withExample.length / scalars.length).toBeGreaterThan(0.6);
    const example = (schema: string, property: string) =>
      (schemas[schema].properties?.[property] as { example?: unknown }).example;
    expect(example('RegisterDto', 'email')).toBe('ada@acme.co.id');
    expect(example('RegisterDto', 'password')).toBe('correct horse battery');
    expect(example('DomainDto', 'uuid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(example('DomainDto', 'createdAt')).toBe('2026-11-27T10:00:00.000Z');
    expect(example('DomainDto', 'status')).toBe('pending');
    // Never a value of another type: a date filter is not given an address.
    expect(example('ReplayDeliveriesDto', 'from')).toBeUndefined();
  });

  it('documents error responses as the failure envelope (ErrorEnvelopeDto)', () => {
    expect(doc.components.schemas.ErrorEnvelopeDto).toMatchObject({
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['failed'] },
        code: { type: 'integer' },
        msg: { type: 'string' },
        // OpenAPI 3.0 has no null type: a nullable object that is always null.
        data: { type: 'object', nullable: true },
        error: { $ref: expect.stringMatching(/ErrorBodyDto$/) },
      },
      required: expect.arrayContaining(['status', 'code', 'msg', 'data', 'error']),
    });
    const errorBody = schemaOf(
      (doc.components.schemas.ErrorEnvelopeDto.properties?.error as Schema).$ref as string,
    );
    expect(Object.keys(errorBody.properties ?? {})).toEqual(
      expect.arrayContaining(['msg', 'details', 'omittedDetails']),
    );
    expect(errorBody.properties?.omittedDetails).toMatchObject({ type: 'integer' });
    expect(errorBody.required).toEqual(['msg']);

    for (const { key, op } of operations) {
      const errors = Object.entries(op.responses).filter(([status]) => /^[45]\d\d$/.test(status));
      if (NO_ERROR_RESPONSES.has(key)) {
        expect([key, errors]).toEqual([key, []]);
        continue;
      }
      expect([key, errors.length > 0]).toEqual([key, true]);
      for (const [status, response] of errors) {
        expect([key, status, response.content?.['application/json']?.schema]).toEqual([
          key,
          status,
          { $ref: ERROR_ENVELOPE_REF },
        ]);
        // Its example is a failure of that very status, with a message the service answers.
        const example = response.content?.['application/json']?.example as
          { code: number; msg: string; status: string; data: null; error: { msg: string } } | undefined;
        expect([key, status, example?.code, example?.status, example?.data]).toEqual([
          key,
          status,
          Number(status),
          'failed',
          null,
        ]);
        expect([key, status, typeof example?.msg, example?.error.msg === example?.msg]).toEqual([
          key,
          status,
          'string',
          true,
        ]);
      }
      const statuses = errors.map(([status]) => status);
      // What each kind of operation can be refused with is documented.
      if (!PUBLIC.has(key)) expect([key, statuses]).toEqual([key, expect.arrayContaining(['401'])]);
      if (op.security?.some((s) => 'bearer' in s) && !/refresh|revoke/.test(key)) {
        expect([key, statuses]).toEqual([key, expect.arrayContaining(['401', '403'])]);
      }
      // A machine credential answers 503 while unset; the metrics token falls back to loopback (403).
      if (op.security?.some((s) => 'metrics-token' in s)) {
        expect([key, statuses]).toEqual([key, expect.arrayContaining(['401', '403'])]);
      } else if (op.security?.some((s) => !('bearer' in s) && !('customer-api-key' in s))) {
        expect([key, statuses]).toEqual([key, expect.arrayContaining(['401', '503'])]);
      }
      if (op.requestBody) expect([key, statuses]).toEqual([key, expect.arrayContaining(['400'])]);
      if (key.includes('/:')) expect([key, statuses]).toEqual([key, expect.arrayContaining(['400', '404'])]);
    }
  });

  it('references a DTO schema with its properties for every request body', () => {
    const withBody = operations.filter((o) => o.op.requestBody);
    expect(withBody.length).toBeGreaterThanOrEqual(17);
    for (const { key, op } of withBody) {
      if (MULTIPART_UPLOADS.has(key)) {
        const upload = op.requestBody?.content['multipart/form-data']?.schema;
        expect([key, upload?.properties?.file]).toEqual([
          key,
          expect.objectContaining({ type: 'string', format: 'binary' }),
        ]);
        continue;
      }
      const schema = op.requestBody?.content['application/json']?.schema;
      expect([key, schema?.$ref]).toEqual([key, expect.stringMatching(/^#\/components\/schemas\/\w+Dto$/)]);
      const model = schemaOf(schema?.$ref as string);
      expect([key, Object.keys(model.properties ?? {}).length > 0]).toEqual([key, true]);
    }
  });

  it('carries the class-validator rules into the body schemas (RegisterDto, CreateAdminDto)', () => {
    const register = operations.find((o) => o.key === 'POST /api/v1/users/register')?.op;
    expect(register?.requestBody?.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RegisterDto',
    });
    const dto = doc.components.schemas.RegisterDto;
    expect(dto.required?.sort()).toEqual(['companyName', 'email', 'fullName', 'password']);
    expect(dto.properties).toMatchObject({
      companyName: { type: 'string', maxLength: 200 },
      fullName: { type: 'string', maxLength: 200 },
      email: { type: 'string', format: 'email', maxLength: 254 },
      password: { type: 'string', minLength: 10, maxLength: 128 },
      phone: { type: 'string' },
    });

    expect(doc.components.schemas.CreateAdminDto.properties).toMatchObject({
      email: { type: 'string', format: 'email' },
      password: { type: 'string', minLength: 10 },
      roleName: { type: 'string', enum: ['superAdmin', 'admin', 'accounting'] },
    });
    expect(doc.components.schemas.UpdateAdminDto.properties).toMatchObject({
      isActive: { type: 'boolean' },
    });
  });

  it('documents path and query parameters', () => {
    const get = operations.find((o) => o.key === 'GET /api/v1/admins/:uuid')?.op;
    expect(get?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'uuid', in: 'path', required: true })]),
    );
    const list = operations.find((o) => o.key === 'GET /api/v1/admins')?.op;
    const query = Object.fromEntries((list?.parameters ?? []).map((p) => [p.name, p]));
    expect(Object.keys(query)).toEqual(
      expect.arrayContaining(['page', 'limit', 'sort', 'search', 'isActive', 'roleName']),
    );
    expect(query.limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(query.page.schema).toMatchObject({ minimum: 1, default: 1 });
    // README "Lists": every paging and filter parameter is optional (defaults apply).
    for (const p of Object.values(query)) expect([p.name, p.required]).toEqual([p.name, false]);
    expect(query.isActive.schema).toMatchObject({ type: 'boolean' });
    for (const p of Object.values(query)) expect(p.in).toBe('query');
  });

  it('is a valid OpenAPI document (swagger-parser)', async () => {
    // validate() dereferences the object it is given: hand it a copy.
    type ParserDocument = NonNullable<Parameters<SwaggerParser.ApiCallback>[1]>;
    await expect(
      SwaggerParser.validate(structuredClone(doc) as unknown as ParserDocument),
    ).resolves.toBeDefined();
  });

  it('declares every tag at the top level with a description, and a relative server', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.tags).toEqual(OPENAPI_TAGS);
    for (const tag of doc.tags ?? [])
      expect([tag.name, (tag.description ?? '').length > 20]).toEqual([tag.name, true]);
    const declared = new Set((doc.tags ?? []).map((t) => t.name));
    const productOperations = operations.filter((o) => !o.key.includes(' /test/'));
    for (const { key, op } of productOperations) {
      expect([key, op.tags?.length]).toEqual([key, 1]);
      expect([key, op.tags?.every((t) => declared.has(t))]).toEqual([key, true]);
    }
  });

  it('gives every operation a one-line summary and a description of its own (who may call, what fails)', () => {
    for (const { key, op } of operations.filter((o) => !o.key.includes(' /test/'))) {
      expect([key, typeof op.summary, op.summary?.includes('\n')]).toEqual([key, 'string', false]);
      const description = op.description ?? '';
      expect([key, description.length >= 60, description.includes(op.summary ?? '')]).toEqual([
        key,
        true,
        false,
      ]);
    }
  });

  it('declares {companyUuid} on every /companies/{companyUuid} operation (the ownership guard reads it)', () => {
    const scoped = operations.filter((o) => o.key.includes('/:companyUuid'));
    expect(scoped.length).toBeGreaterThanOrEqual(8);
    for (const { key, op } of scoped) {
      expect([key, op.parameters?.find((p) => p.name === 'companyUuid')]).toEqual([
        key,
        expect.objectContaining({ in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }),
      ]);
    }
  });

  it('serves the Swagger UI at /api-docs', async () => {
    const res = await t.http().get('/api-docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<!DOCTYPE html>/i);
    expect(res.text).toContain('swagger-ui');
    expect(res.text).toContain('<title>Email Relay Service API</title>');
    const init = await t.http().get('/api-docs/swagger-ui-init.js').expect(200);
    expect(init.text).toMatch(/"persistAuthorization": true/);
    expect(init.text).toMatch(/"filter": true/);
  });
});
