import type { OpenAPIObject } from '@nestjs/swagger';

type Schema = {
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  $ref?: string;
  allOf?: Schema[];
};

const AT = '2026-11-27T10:00:00.000Z';
const UUID = '0d5c7f2e-3b1a-4c8e-9f6d-2a7b8c9d0e1f';

/**
 * Examples by property name: what a front end sees in Swagger UI and in generated clients, the
 * same value wherever the name means the same thing. A DTO's own example (`@ApiProperty({ example })`)
 * always wins.
 */
const BY_NAME: Record<string, unknown> = {
  email: 'ada@acme.co.id',
  emails: ['jo@example.net', 'lee@example.org'],
  password: 'correct horse battery',
  newPassword: 'another horse battery',
  currentPassword: 'correct horse battery',
  fullName: 'Ada Lovelace',
  companyName: 'Acme Mail',
  legalName: 'PT Acme Mail Indonesia',
  phone: '+62 21 555 0100',
  position: 'IT manager',
  website: 'https://acme.co.id',
  city: 'Jakarta',
  country: 'ID',
  address: 'Jl. Sudirman 1',
  taxId: '01.234.567.8-901.000',
  currency: 'IDR',
  price: 150000,
  quota: 10000,
  used: 1234,
  durationDays: 30,
  page: 1,
  limit: 20,
  totalItems: 42,
  totalPages: 3,
  token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
  accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
  refreshToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
  tokenType: 'Bearer',
  expiresIn: 60,
  relayUsername: 'r-xhc5ydyt',
  relayPassword: 'CNbO2au23NwbBUZojAnuJQzXW9RNJtYQ',
  selector: 'rs202611',
  senderDomain: 'acme.co.id',
  domain: 'acme.co.id',
  domains: ['acme.co.id'],
  recipient: 'jo@example.net',
  sender: 'news@acme.co.id',
  messageId: '<20261127100000.1234@acme.co.id>',
  queueId: 'C913716C112',
  dsn: '5.1.1',
  relay: 'mx.example.net[198.51.100.7]:25',
  ips: ['203.0.113.10', '198.51.100.0/24'],
  allowedIps: ['203.0.113.10', '198.51.100.0/24'],
  description: 'Newsletters and receipts',
  title: 'Your quota is used up',
  body: 'Your company has sent 10000 of 10000 messages this period.',
  reason: 'manual',
  detail: 'Asked to be removed by phone',
  url: 'https://hooks.acme.co.id/relay',
  sent: 9500,
  delivered: 9200,
  deferred: 40,
  complained: 3,
  count: 12,
  hard: 120,
  soft: 25,
  block: 12,
  bounceRate: 0.016,
  complaintRate: 0.0003,
  value: 0.012,
  threshold: 0.01,
  rule: 'gmail-auth-5.7.26',
  response: '550 5.7.26 This mail has been blocked because the sender is unauthenticated.',
};

/** Examples by format, for the properties no name above covers. */
const BY_FORMAT: Record<string, unknown> = {
  uuid: UUID,
  email: 'ada@acme.co.id',
  'date-time': AT,
  date: '2026-11-27',
  uri: 'https://acme.co.id',
};

/** Whether the example is a value of the schema's type (and of its enum, when it has one). */
function fits(example: unknown, schema: Schema): boolean {
  if (schema.enum) return schema.enum.includes(example);
  switch (schema.type) {
    case 'string':
      return typeof example === 'string';
    case 'integer':
    case 'number':
      return typeof example === 'number';
    case 'boolean':
      return typeof example === 'boolean';
    case 'array':
      return Array.isArray(example) && (!schema.items || example.every((item) => fits(item, schema.items!)));
    case undefined:
    default:
      return false;
  }
}

function exampleFor(name: string, schema: Schema): unknown {
  if (schema.$ref || schema.allOf) return undefined;
  const candidates = [
    schema.format ? BY_FORMAT[schema.format] : undefined,
    BY_NAME[name],
    name === 'uuid' || name.endsWith('Uuid') ? UUID : undefined,
    name.endsWith('At') ? AT : undefined,
    schema.enum?.[0],
  ];
  return candidates.find((example) => example !== undefined && fits(example, schema));
}

/**
 * Gives the properties of the document's schemas a realistic example where their DTO gives none
 * (by format, then by name, then an enum's first value; only a value of the property's type), so
 * that the request bodies Swagger UI pre-fills and the answers it shows look like the service's.
 */
export function withExamples(document: OpenAPIObject): OpenAPIObject {
  for (const schema of Object.values(document.components?.schemas ?? {}) as Schema[]) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (property.example !== undefined) continue;
      const example = exampleFor(name, property);
      if (example !== undefined) property.example = example;
    }
  }
  return document;
}
