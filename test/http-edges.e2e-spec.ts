import { gzipSync } from 'node:zlib';
import request from 'supertest';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  LoggedIn,
  RegisteredUser,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * README.md "Bodies" and "Envelope" at the edges of HTTP: media-type parameters, `null`,
 * invalid Unicode, huge bodies of unknown keys, webhook bodies (10 MB, gzip), and the errors
 * Fastify and Node raise before any route runs.
 */
const CALLBACK_TOKEN = 'edges-callback-token-0123456789';
/** superagent would JSON-encode a Buffer sent as application/json; gzip bytes go as they are. */
const asIs = (body: unknown) => body as string;

describe('HTTP edges', () => {
  let t: TestApp;
  let user: RegisteredUser & LoggedIn;
  let admin: CreatedAdmin;

  beforeAll(async () => {
    t = await createTestApp({ env: { PAYMENT_CALLBACK_TOKEN: CALLBACK_TOKEN } });
    user = await createActiveUser(t);
    admin = await createAdmin(t, 'superAdmin');
  });
  afterAll(async () => {
    await t.close();
  });

  const fullNameOf = async (): Promise<string> => {
    const rows: Array<{ n: string }> = await t.dataSource.query(
      `SELECT c.full_name AS n FROM contacts c JOIN users u ON u.contact_id = c.id WHERE u.uuid = '${user.userUuid}'`,
    );
    return rows[0].n;
  };

  describe('JSON with media-type parameters and any case', () => {
    it.each([
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      'application/json ; charset="utf-8"',
    ])('%s is parsed like application/json', async (type) => {
      const res = await t
        .http()
        .patch('/api/v1/users/me')
        .set(...bearer(user.accessToken))
        .set('content-type', type)
        .send(JSON.stringify({ fullName: `Charset ${type.length}` }))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(await fullNameOf()).toBe(`Charset ${type.length}`);
    });

    it('a charset other than UTF-8 is a 415 (JSON is UTF-8, RFC 8259)', async () => {
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json; charset=iso-8859-1')
        .send(JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(12) }))
        .expect(415);
      expectFailure(res.body, 415, /charset/i);
    });

    it('a gzip body on a route that does not take one is a 415, not a parse error', async () => {
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .set('content-encoding', 'gzip')
        .serialize(asIs)
        .send(gzipSync(JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(12) })))
        .expect(415);
      expectFailure(res.body, 415, /content-encoding/i);
    });
  });

  describe('null for a field that cannot be null', () => {
    it('PATCH /users/me {"fullName":null}: 400 naming the field, nothing written', async () => {
      const before = await fullNameOf();
      const res = await t
        .http()
        .patch('/api/v1/users/me')
        .set(...bearer(user.accessToken))
        .send({ fullName: null })
        .expect(400);
      expectFailure(res.body, 400, 'Validation failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['fullName']);
      expect(await fullNameOf()).toBe(before);
    });

    it('PATCH /admins/me {"fullName":null}: 400 naming the field', async () => {
      const res = await t
        .http()
        .patch('/api/v1/admins/me')
        .set(...bearer(admin.accessToken))
        .send({ fullName: null })
        .expect(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['fullName']);
    });

    it('PATCH /admins/:uuid {"isActive":null}: 400 naming the field, the admin unchanged', async () => {
      const other = await createAdmin(t, 'accounting');
      const res = await t
        .http()
        .patch(`/api/v1/admins/${other.uuid}`)
        .set(...bearer(admin.accessToken))
        .send({ isActive: null })
        .expect(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['isActive']);
      const [row] = await t.dataSource.query(`SELECT is_active FROM admins WHERE uuid = '${other.uuid}'`);
      expect(Boolean(row.is_active)).toBe(true);
    });

    it('a field that may be cleared still takes null (control)', async () => {
      await t
        .http()
        .patch(`/api/v1/companies/${user.companyUuid}`)
        .set(...bearer(user.accessToken))
        .send({ city: null })
        .expect(200);
    });
  });

  describe('invalid Unicode', () => {
    it.each([
      ['a lone high surrogate in a value', '{"fullName":"\\ud800"}'],
      ['a lone low surrogate in a value', '{"fullName":"ab\\udc00cd"}'],
      ['a reversed pair', '{"fullName":"\\udc00\\ud800"}'],
      ['a lone surrogate in a key', '{"\\ud800":"x"}'],
    ])('%s is a 400 and nothing is stored', async (_case, body) => {
      const before = await fullNameOf();
      const res = await t
        .http()
        .patch('/api/v1/users/me')
        .set(...bearer(user.accessToken))
        .set('content-type', 'application/json')
        .send(body)
        .expect(400);
      expectFailure(res.body, 400, /unicode|surrogate/i);
      expect(await fullNameOf()).toBe(before);
    });

    it('a proper surrogate pair (an emoji) is fine (control)', async () => {
      await t
        .http()
        .patch('/api/v1/users/me')
        .set(...bearer(user.accessToken))
        .set('content-type', 'application/json')
        .send('{"fullName":"Emoji \\ud83d\\ude00"}')
        .expect(200);
      expect(await fullNameOf()).toBe('Emoji \u{1F600}');
    });
  });

  describe('a 1 MB body of 90,000 unknown keys', () => {
    it('is refused with at most 20 details and the count of the rest', async () => {
      const keys = Array.from({ length: 90_000 }, (_, i) => `"k${i.toString(36)}":1`);
      const body = `{${keys.join(',')}}`;
      expect(body.length).toBeLessThan(1024 * 1024);
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .send(body)
        .expect(400);
      expectFailure(res.body, 400, 'Validation failed');
      expect(res.body.error.details).toHaveLength(20);
      expect(res.body.error.details[0]).toEqual({ field: 'k0', messages: ['property k0 should not exist'] });
      expect(res.body.error.omittedDetails).toBe(90_000 - 20);
      expect(JSON.stringify(res.body).length).toBeLessThan(10_000);
    });

    it('a known field among them is not called unknown', async () => {
      const keys = Array.from({ length: 5_000 }, (_, i) => `"k${i}":1`);
      const body = `{"email":"a@b.co",${keys.join(',')},"password":"x"}`;
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .send(body)
        .expect(400);
      const fields = res.body.error.details.map((d: { field: string }) => d.field);
      expect(fields).not.toContain('email');
      expect(fields[0]).toBe('k0');
      expect(res.body.error.omittedDetails).toBe(5_000 - 20);
    });

    it('an object with too many fields inside the body is a 400 too', async () => {
      const inner = `{${Array.from({ length: 2_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .send(`{"email":${inner},"password":"x"}`)
        .expect(400);
      expectFailure(res.body, 400, 'Request body has an object with 2000 fields (at most 1000)');
    });

    it('with few problems, every detail is listed and nothing is said to be omitted (control)', async () => {
      const res = await t.http().post('/api/v1/users/login').send({ foo: 1 }).expect(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
        'email',
        'foo',
        'password',
      ]);
      expect(res.body.error).not.toHaveProperty('omittedDetails');
    });
  });

  describe('UUID parameters are checked before ownership', () => {
    it('GET /companies/not-a-uuid is a 400, like every other invalid UUID', async () => {
      const res = await t
        .http()
        .get('/api/v1/companies/not-a-uuid')
        .set(...bearer(user.accessToken))
        .expect(400);
      expectFailure(res.body, 400);
      expect(res.body.msg).toMatch(/uuid/i);
    });

    it("another company's well-formed UUID is still a 403 (control)", async () => {
      const other = await createActiveUser(t);
      await t
        .http()
        .get(`/api/v1/companies/${other.companyUuid}`)
        .set(...bearer(user.accessToken))
        .expect(403);
    });
  });

  describe('errors raised by Fastify and Node are envelopes', () => {
    const expectFrameworkEnvelope = (res: request.Response, code: number) => {
      expect(res.status).toBe(code);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectFailure(res.body, code);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBeDefined();
    };

    it('a path parameter over 100 characters: 414 envelope', async () => {
      const res = await t
        .http()
        .get(`/api/v1/billings/${'a'.repeat(101)}`)
        .set(...bearer(user.accessToken));
      expectFrameworkEnvelope(res, 414);
    });

    it.each(['/api/v1/users/me%', '/api/v1/billings/%zz'])(
      'a bad %%-escape (%s): 400 envelope',
      async (path) => {
        const res = await t
          .http()
          .get(path)
          .set(...bearer(user.accessToken));
        expectFrameworkEnvelope(res, 400);
        expect(res.body.msg).toMatch(/url/i);
      },
    );

    it('a request id sent by the caller is kept on a framework error', async () => {
      const res = await t.http().get('/api/v1/users/me%').set('x-request-id', 'edge-req-1');
      expect(res.headers['x-request-id']).toBe('edge-req-1');
    });

    it('headers over 16 KB: 431 envelope', async () => {
      const res = await t
        .http()
        .get('/health/live')
        .set('x-big', 'a'.repeat(20 * 1024));
      expectFrameworkEnvelope(res, 431);
    });
  });

  describe('the payment callback is a webhook: gzip and bodies up to 10 MB', () => {
    const CALLBACK = '/api/v1/callback-payment';
    const callbackBody = (padding: number) => ({
      id: `evt-${padding}`,
      external_id: 'no-such-invoice',
      status: 'PAID',
      amount: 1000,
      currency: 'IDR',
      padding: 'p'.repeat(padding),
    });

    /** Posts the callback as JSON text, or gzipped; answers the response and how many events were stored. */
    const postCallback = async (
      body: object,
      encoding: 'identity' | 'gzip' = 'identity',
      type = 'application/json',
    ) => {
      const before = await countRows(t, 'payment_events');
      const text = JSON.stringify(body);
      const res = await t
        .http()
        .post(CALLBACK)
        .set('x-callback-token', CALLBACK_TOKEN)
        .set('content-type', type)
        .set('content-encoding', encoding)
        .serialize(asIs)
        .send(encoding === 'gzip' ? gzipSync(text) : text);
      return { res, stored: (await countRows(t, 'payment_events')) - before };
    };

    it('a gzip body is inflated and handled like the plain one', async () => {
      const { res, stored } = await postCallback(callbackBody(10), 'gzip', 'application/json; charset=utf-8');
      expect([res.status, res.body.msg]).toEqual([200, 'Payment callback received']);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(stored).toBe(1);
    });

    it('a 5 MB body is accepted', async () => {
      const { res, stored } = await postCallback(callbackBody(5 * 1024 * 1024));
      expect([res.status, stored]).toEqual([200, 1]);
    });

    it('a body over 10 MB is a 413, stored nowhere', async () => {
      const { res, stored } = await postCallback(callbackBody(10 * 1024 * 1024 + 1));
      expectFailure(res.body, 413);
      expect(stored).toBe(0);
    });

    it('a gzip body that inflates past 10 MB is a 413 (a gzip bomb is not an out-of-memory)', async () => {
      expect(gzipSync(JSON.stringify(callbackBody(16 * 1024 * 1024))).length).toBeLessThan(1024 * 1024);
      const { res, stored } = await postCallback(callbackBody(16 * 1024 * 1024), 'gzip');
      expectFailure(res.body, 413);
      expect(stored).toBe(0);
    });

    it('bytes that are not gzip under content-encoding: gzip are a 400', async () => {
      const res = await t
        .http()
        .post(CALLBACK)
        .set('x-callback-token', CALLBACK_TOKEN)
        .set('content-type', 'application/json')
        .set('content-encoding', 'gzip')
        .send(JSON.stringify(callbackBody(1)))
        .expect(400);
      expectFailure(res.body, 400, /gzip/i);
    });

    it('the 1 MB limit still holds on the other routes (control)', async () => {
      const res = await t
        .http()
        .post('/api/v1/users/login')
        .set('content-type', 'application/json')
        .send(JSON.stringify({ email: 'a@b.co', password: 'p'.repeat(2 * 1024 * 1024) }))
        .expect(413);
      expectFailure(res.body, 413);
    });
  });
});
