import type { Response } from 'supertest';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { User } from '../src/modules/users/entities/user.entity';
import {
  billingRow,
  createBilling,
  createPackage,
  pdfBytes,
  pngBytes,
  setBillingStatus,
} from './support/billing-fixtures';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const BASE = '/api/v1/billings';
const MAX = 2 * 1024 * 1024;

type Owner = RegisteredUser & LoggedIn;

/** Collects a binary response body as a Buffer (supertest parses only text types by default). */
const binary = (res: Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

describe('Payment proof upload and download', () => {
  let t: TestApp;
  let owner: Owner;
  let accounting: CreatedAdmin;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createActiveUser(t);
    accounting = await createAdmin(t, 'accounting');
  });
  afterAll(async () => {
    await t.close();
  });

  async function pendingBilling(u: Owner = owner) {
    return createBilling(t, u.accessToken, (await createPackage(t)).uuid, 'manual');
  }

  const upload = (
    uuid: string,
    content: Buffer,
    filename: string,
    contentType = 'application/octet-stream',
    token = owner.accessToken,
  ) =>
    t
      .http()
      .post(`${BASE}/${uuid}/proof`)
      .set(...bearer(token))
      .attach('file', content, { filename, contentType });

  async function expectNothingStored(uuid: string) {
    const row = await billingRow(t, uuid);
    expect(row.status).toBe('pending');
    expect(row.proofContent).toBeNull();
    expect(row.proofFileName).toBeNull();
    expect(row.proofFileSize).toBeNull();
  }

  it('accepts a real PNG: awaiting_review, proofFile metadata, byte-identical download with its type', async () => {
    const png = pngBytes(8, 5);
    const b = await pendingBilling();
    const res = await upload(b.uuid, png, 'transfer receipt.png', 'image/png').expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200, msg: 'Payment proof uploaded' });
    expect(res.body.data).toMatchObject({
      uuid: b.uuid,
      status: 'awaiting_review',
      proofFile: {
        name: 'transfer_receipt.png',
        type: 'image/png',
        size: png.length,
        uploadedAt: expect.any(String),
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(png.toString('base64').slice(0, 20));

    const down = await t
      .http()
      .get(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(down.headers['content-type']).toBe('image/png');
    expect(down.headers['content-disposition']).toBe('attachment; filename="transfer_receipt.png"');
    expect(down.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(down.body as Buffer, png)).toBe(0);

    const fetched = await t
      .http()
      .get(`${BASE}/${b.uuid}`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(fetched.body.data.proofFile).toEqual(res.body.data.proofFile);
  });

  it('accepts a real PDF whatever type the client declares, and serves it back as application/pdf', async () => {
    const pdf = pdfBytes();
    const b = await pendingBilling();
    const res = await upload(b.uuid, pdf, 'invoice.pdf', 'text/plain').expect(200);
    expect(res.body.data.proofFile).toMatchObject({
      name: 'invoice.pdf',
      type: 'application/pdf',
      size: pdf.length,
    });
    const down = await t
      .http()
      .get(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(down.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(down.body as Buffer, pdf)).toBe(0);

    // Admins download the same bytes.
    const adminDown = await t
      .http()
      .get(`/api/v1/admins/billings/${b.uuid}/proof`)
      .set(...bearer(accounting.accessToken))
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(Buffer.compare(adminDown.body as Buffer, pdf)).toBe(0);
    expect(adminDown.headers['content-disposition']).toBe('attachment; filename="invoice.pdf"');
  });

  it.each([
    ['JPEG', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]), 'image/jpeg'],
    ['GIF', Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(64, 1)]), 'image/gif'],
    [
      'WebP',
      Buffer.concat([Buffer.from('RIFF\u0024\u0000\u0000\u0000WEBPVP8 ', 'latin1'), Buffer.alloc(64, 1)]),
      'image/webp',
    ],
  ])('recognises %s by its first bytes', async (_label, content, type) => {
    const b = await pendingBilling();
    const res = await upload(b.uuid, content, 'scan.bin').expect(200);
    expect(res.body.data.proofFile.type).toBe(type);
  });

  it('refuses 2 MiB + 1 byte with 413 while streaming, and stores nothing', async () => {
    const b = await pendingBilling();
    const big = Buffer.concat([pngBytes(), Buffer.alloc(MAX + 1 - pngBytes().length, 7)]);
    expect(big.length).toBe(MAX + 1);
    const res = await upload(b.uuid, big, 'big.png', 'image/png').expect(413);
    expectFailure(res.body, 413, /larger than 2 MB/);
    await expectNothingStored(b.uuid);
  });

  it('refuses a declared body far over the limit (3 MiB) with 413 before reading it', async () => {
    const b = await pendingBilling();
    const res = await upload(
      b.uuid,
      Buffer.concat([pngBytes(), Buffer.alloc(MAX + 1024 * 1024, 1)]),
      'huge.png',
    ).expect(413);
    expectFailure(res.body, 413);
    await expectNothingStored(b.uuid);
  });

  it('accepts exactly 2 MiB', async () => {
    const b = await pendingBilling();
    const exact = Buffer.concat([pngBytes(), Buffer.alloc(MAX - pngBytes().length, 7)]);
    const res = await upload(b.uuid, exact, 'exact.png', 'image/png').expect(200);
    expect(res.body.data.proofFile.size).toBe(MAX);
  });

  it('refuses a text file named .png with 415 and stores nothing', async () => {
    const b = await pendingBilling();
    const res = await upload(
      b.uuid,
      Buffer.from('this is not an image\n'),
      'receipt.png',
      'image/png',
    ).expect(415);
    expectFailure(res.body, 415, 'The proof must be an image (PNG, JPEG, GIF, WebP) or a PDF');
    await expectNothingStored(b.uuid);
  });

  it('refuses a JSON body (415), a form without a file, a file in another field or an empty file (400)', async () => {
    const b = await pendingBilling();
    const json = await t
      .http()
      .post(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .send({ file: 'iVBORw0KGgo=' })
      .expect(415);
    expectFailure(json.body, 415);
    const noFile = await t
      .http()
      .post(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .field('note', 'hello')
      .expect(400);
    expectFailure(noFile.body, 400);
    const otherField = await t
      .http()
      .post(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .attach('document', pngBytes(), 'a.png')
      .expect(400);
    expectFailure(otherField.body, 400, 'The file must be sent in multipart field "file"');
    await upload(b.uuid, Buffer.alloc(0), 'empty.png').expect(400);
    const malformed = await t
      .http()
      .post(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .set('content-type', 'multipart/form-data')
      .send('garbage')
      .expect(400);
    expectFailure(malformed.body, 400);
    await expectNothingStored(b.uuid);
  });

  it('sanitises the stored name', async () => {
    const cases: Array<[string, string]> = [
      ['../../etc/pass wd.png', 'pass_wd.png'],
      ['C:\\Users\\me\\bukti transfer (1).png', 'bukti_transfer_1_.png'],
      ['a<b>|c?.png', 'a_b_c_.png'],
      ['.hidden.png', 'hidden.png'],
      ['ünïcødé.png', 'unic_de.png'],
      ['∑∑∑', 'proof.png'],
    ];
    for (const [raw, stored] of cases) {
      const b = await pendingBilling();
      const res = await upload(b.uuid, pngBytes(), raw, 'image/png').expect(200);
      expect([raw, res.body.data.proofFile.name]).toEqual([raw, stored]);
    }
  });

  it('names the stored file by its detected type, whatever extension the upload claimed', async () => {
    const b = await pendingBilling();
    const res = await upload(b.uuid, pngBytes(), 'x<script>.html', 'text/html').expect(200);
    expect(res.body.data.proofFile).toMatchObject({ name: 'x_script_.png', type: 'image/png' });
    expect((await billingRow(t, b.uuid)).proofFileName).toBe('x_script_.png');
    const down = await t
      .http()
      .get(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(down.headers['content-disposition']).toBe('attachment; filename="x_script_.png"');

    const cases: Array<[Buffer, string, string]> = [
      [pngBytes(), 'evil.html.png', 'evil_html.png'],
      [pngBytes(), 'receipt', 'receipt.png'],
      [pdfBytes(), 'scan.PNG', 'scan.pdf'],
      [pdfBytes(), 'report.v2.pdf', 'report_v2.pdf'],
      [pngBytes(), `${'a'.repeat(120)}.html`, `${'a'.repeat(96)}.png`],
    ];
    for (const [content, raw, stored] of cases) {
      const other = await pendingBilling();
      const up = await upload(other.uuid, content, raw).expect(200);
      expect([raw, up.body.data.proofFile.name]).toEqual([raw, stored]);
    }
  });

  it('notifies accounting admins (billing.proof_uploaded)', async () => {
    const b = await pendingBilling();
    await upload(b.uuid, pngBytes(), 'p.png').expect(200);
    const admin = await t.dataSource.query(`SELECT id FROM admins WHERE email = '${accounting.email}'`);
    const notes = await t.dataSource
      .getRepository(Notification)
      .find({ where: { adminId: admin[0].id, type: 'billing.proof_uploaded' } });
    expect(notes.some((n) => (n.data as { billingUuid?: string } | null)?.billingUuid === b.uuid)).toBe(true);
  });

  it('a second upload while awaiting review, or on any non-pending billing, is a 409 and changes nothing', async () => {
    const b = await pendingBilling();
    const first = pngBytes(2, 2);
    await upload(b.uuid, first, 'first.png').expect(200);
    const res = await upload(b.uuid, pdfBytes(), 'second.pdf').expect(409);
    expectFailure(res.body, 409, 'Cannot upload a proof for a billing that is awaiting review');
    const row = await billingRow(t, b.uuid);
    expect(row.proofFileName).toBe('first.png');
    expect(Buffer.compare(Buffer.from(row.proofContent!), first)).toBe(0);

    for (const status of ['paid', 'refunded', 'expired', 'cancelled'] as const) {
      const other = await pendingBilling();
      await setBillingStatus(t, other.uuid, status);
      await upload(other.uuid, pngBytes(), 'x.png').expect(409);
      expect((await billingRow(t, other.uuid)).proofContent).toBeNull();
    }
  });

  it('members may download but not upload (403); GET proof is 404 when there is none', async () => {
    const m = await createActiveUser(t);
    const users = t.dataSource.getRepository(User);
    const ownerRow = await users.findOneByOrFail({ uuid: owner.userUuid });
    await users.update({ uuid: m.userUuid }, { companyId: ownerRow.companyId, companyRole: 'member' });
    const b = await pendingBilling();
    const none = await t
      .http()
      .get(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(m.accessToken))
      .expect(404);
    expectFailure(none.body, 404, 'This billing has no payment proof');
    await upload(b.uuid, pngBytes(), 'm.png', 'image/png', m.accessToken).expect(403);
    await expectNothingStored(b.uuid);
    await upload(b.uuid, pngBytes(), 'o.png').expect(200);
    await t
      .http()
      .get(`${BASE}/${b.uuid}/proof`)
      .set(...bearer(m.accessToken))
      .expect(200);
  });

  it("another company's billing: upload and download are 404, nothing stored", async () => {
    const stranger = await createActiveUser(t);
    const theirs = await pendingBilling(stranger);
    const up = await upload(theirs.uuid, pngBytes(), 'x.png').expect(404);
    expectFailure(up.body, 404, 'Billing not found');
    await expectNothingStored(theirs.uuid);
    await upload(theirs.uuid, pngBytes(), 'x.png', 'image/png', stranger.accessToken).expect(200);
    const down = await t
      .http()
      .get(`${BASE}/${theirs.uuid}/proof`)
      .set(...bearer(owner.accessToken))
      .expect(404);
    expectFailure(down.body, 404, 'Billing not found');
  });

  it('refuses anonymous uploads (401)', async () => {
    const b = await pendingBilling();
    await t.http().post(`${BASE}/${b.uuid}/proof`).attach('file', pngBytes(), 'a.png').expect(401);
    await expectNothingStored(b.uuid);
  });
});
