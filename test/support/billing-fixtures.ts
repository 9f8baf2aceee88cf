import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { Billing, BillingStatus } from '../../src/modules/billings/entities/billing.entity';
import { Package } from '../../src/modules/packages/entities/package.entity';
import { bearer } from './factories';
import { TestApp } from './test-app';

/** A package written straight to the database (the admin routes are tested in packages.e2e-spec). */
export async function createPackage(t: TestApp, overrides: Partial<Package> = {}): Promise<Package> {
  const repo = t.dataSource.getRepository(Package);
  return repo.save(
    repo.create({
      name: `Package ${randomBytes(4).toString('hex')}`,
      quota: 1000,
      price: 150000,
      currency: 'IDR',
      durationDays: 30,
      isPublic: true,
      isActive: true,
      ...overrides,
    }),
  );
}

let insertedBillings = 0;

/**
 * A billing written straight to the database for a company and package (snapshot taken from
 * the package): pending, gateway, due in a week unless `overrides` say otherwise.
 */
export async function insertBilling(
  t: TestApp,
  companyId: number,
  pkg: Package,
  overrides: Partial<Billing> = {},
): Promise<Billing> {
  insertedBillings += 1;
  const number = `INV/T/${process.pid}/${randomBytes(3).toString('hex')}${insertedBillings}`;
  const repo = t.dataSource.getRepository(Billing);
  return repo.save(
    repo.create({
      number,
      externalId: number,
      companyId,
      packageId: pkg.id,
      packageName: pkg.name,
      packageQuota: pkg.quota,
      packageDurationDays: pkg.durationDays,
      amount: pkg.price,
      currency: pkg.currency,
      method: 'gateway',
      status: 'pending',
      expiresAt: new Date(Date.now() + 7 * 86_400_000),
      ...overrides,
    }),
  );
}

/** POST /api/v1/billings as the owner; returns the billing DTO. */
export async function createBilling(
  t: TestApp,
  accessToken: string,
  packageUuid: string,
  method: 'manual' | 'gateway' = 'manual',
): Promise<{ uuid: string; number: string; status: string; amount: number }> {
  const res = await t
    .http()
    .post('/api/v1/billings')
    .set(...bearer(accessToken))
    .send({ packageUuid, method });
  expect([200, 201]).toContain(res.status);
  return res.body.data;
}

export async function setBillingStatus(t: TestApp, uuid: string, status: BillingStatus): Promise<void> {
  await t.dataSource.getRepository(Billing).update({ uuid }, { status });
}

export async function billingRow(t: TestApp, uuid: string): Promise<Billing> {
  return t.dataSource
    .getRepository(Billing)
    .createQueryBuilder('billing')
    .addSelect('billing.proofContent')
    .where('billing.uuid = :uuid', { uuid })
    .getOneOrFail();
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid RGB PNG of width × height pixels (signature, IHDR, zlib-compressed IDAT, IEND). */
export function pngBytes(width = 4, height = 3): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) row.set([(x * 60) & 0xff, (y * 80) & 0xff, 200], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.concat(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A minimal valid one-page PDF with a correct cross-reference table. */
export function pdfBytes(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
