import { createTestApp, TestApp } from './support/test-app';
import { bearer, createAdmin, expectFailure } from './support/factories';
import { TestControllersModule } from './support/test-controllers';

/**
 * The machine credentials of auth.md ("Guards"), each proven on a test-only route that carries
 * nothing but its `@UseCredential(...)`: unset secret → 503, missing or wrong → 401, right → 200.
 */

const INTERNAL_API_KEY = 'internal-key-0123456789abcdef';
const LOG_SHIPPER_API_KEY = 'log-shipper-key-0123456789abcdef';
const PAYMENT_CALLBACK_TOKEN = 'callback-token-0123456789abcdef';
const WEBHOOK_USER = 'mail-provider';
const WEBHOOK_PASSWORD = 'webhook-password-0123456789';

const ROUTES = {
  apiKey: '/test/machine/api-key',
  logShipper: '/test/machine/log-shipper-key',
  callback: '/test/machine/callback-token',
  basic: '/test/machine/basic',
} as const;

const basicAuth = (user: string, password: string): [string, string] => [
  'authorization',
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
];

function expectPassed(body: unknown, credential: string): void {
  expect(body).toEqual({
    status: 'success',
    code: 200,
    msg: 'Machine credential accepted',
    data: { credential },
  });
}

describe('Machine guards without their secret', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [TestControllersModule], smtp: false });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    [ROUTES.apiKey, 'Internal API key is not configured', ['x-api-key', 'anything']],
    [ROUTES.logShipper, 'Log shipper API key is not configured', ['x-api-key', 'anything']],
    [ROUTES.callback, 'Payment callback token is not configured', ['x-callback-token', 'anything']],
    [ROUTES.basic, 'Mail provider webhook credentials is not configured', basicAuth('any', 'thing')],
  ] as Array<[string, string, [string, string]]>)(
    '%s refuses everything with 503 "%s", with or without a credential',
    async (path, msg, header) => {
      const bare = await t.http().post(path).expect(503);
      expectFailure(bare.body, 503, msg);
      const withCredential = await t
        .http()
        .post(path)
        .set(...header)
        .expect(503);
      expectFailure(withCredential.body, 503, msg);
    },
  );
});

describe('Machine guards with their secrets set', () => {
  let t: TestApp;
  let accessToken: string;

  beforeAll(async () => {
    t = await createTestApp({
      imports: [TestControllersModule],
      smtp: false,
      env: {
        INTERNAL_API_KEY,
        LOG_SHIPPER_API_KEY,
        PAYMENT_CALLBACK_TOKEN,
        MAIL_PROVIDER_WEBHOOK_USER: WEBHOOK_USER,
        MAIL_PROVIDER_WEBHOOK_PASSWORD: WEBHOOK_PASSWORD,
      },
    });
    accessToken = (await createAdmin(t, 'superAdmin')).accessToken;
  });
  afterAll(async () => {
    await t.close();
  });

  describe.each([
    ['internal API key', ROUTES.apiKey, 'api-key', INTERNAL_API_KEY, LOG_SHIPPER_API_KEY],
    ['log shipper API key', ROUTES.logShipper, 'log-shipper-key', LOG_SHIPPER_API_KEY, INTERNAL_API_KEY],
  ])('%s (%s)', (what, path, credential, key, otherKey) => {
    const refused = `Missing or invalid ${what}`;

    it('refuses a request without a key (401)', async () => {
      const res = await t.http().post(path).expect(401);
      expectFailure(res.body, 401, refused);
    });

    it('refuses a wrong key in x-api-key and in Authorization: Bearer (401)', async () => {
      const header = await t.http().post(path).set('x-api-key', `${key}x`).expect(401);
      expectFailure(header.body, 401, refused);
      const viaBearer = await t
        .http()
        .post(path)
        .set(...bearer(key.slice(0, -1)))
        .expect(401);
      expectFailure(viaBearer.body, 401, refused);
      const empty = await t.http().post(path).set('x-api-key', '').expect(401);
      expectFailure(empty.body, 401, refused);
    });

    it('refuses the other machine key (the keys are not interchangeable)', async () => {
      const header = await t.http().post(path).set('x-api-key', otherKey).expect(401);
      expectFailure(header.body, 401, refused);
      const viaBearer = await t
        .http()
        .post(path)
        .set(...bearer(otherKey))
        .expect(401);
      expectFailure(viaBearer.body, 401, refused);
    });

    it('refuses the key in the callback-token header', async () => {
      const res = await t.http().post(path).set('x-callback-token', key).expect(401);
      expectFailure(res.body, 401, refused);
    });

    it('refuses a user or admin access token as Bearer', async () => {
      const res = await t
        .http()
        .post(path)
        .set(...bearer(accessToken))
        .expect(401);
      expectFailure(res.body, 401, refused);
    });

    it('accepts the right key in x-api-key (200)', async () => {
      const res = await t.http().post(path).set('x-api-key', key).expect(200);
      expectPassed(res.body, credential);
    });

    it('accepts the right key as Authorization: Bearer <key> (200)', async () => {
      const res = await t
        .http()
        .post(path)
        .set(...bearer(key))
        .expect(200);
      expectPassed(res.body, credential);
    });
  });

  describe('payment callback token', () => {
    const refused = 'Missing or invalid payment callback token';

    it('refuses a request without the token (401)', async () => {
      const res = await t.http().post(ROUTES.callback).expect(401);
      expectFailure(res.body, 401, refused);
    });

    it('refuses a wrong token (401)', async () => {
      const res = await t.http().post(ROUTES.callback).set('x-callback-token', 'not-the-token').expect(401);
      expectFailure(res.body, 401, refused);
    });

    it('accepts the token only in x-callback-token: not as Bearer, not in x-api-key', async () => {
      const viaBearer = await t
        .http()
        .post(ROUTES.callback)
        .set(...bearer(PAYMENT_CALLBACK_TOKEN))
        .expect(401);
      expectFailure(viaBearer.body, 401, refused);
      const viaApiKey = await t
        .http()
        .post(ROUTES.callback)
        .set('x-api-key', PAYMENT_CALLBACK_TOKEN)
        .expect(401);
      expectFailure(viaApiKey.body, 401, refused);
      const ok = await t
        .http()
        .post(ROUTES.callback)
        .set('x-callback-token', PAYMENT_CALLBACK_TOKEN)
        .expect(200);
      expectPassed(ok.body, 'callback-token');
    });

    it('refuses the API keys and an access token', async () => {
      for (const value of [INTERNAL_API_KEY, LOG_SHIPPER_API_KEY, accessToken]) {
        const res = await t.http().post(ROUTES.callback).set('x-callback-token', value).expect(401);
        expectFailure(res.body, 401, refused);
      }
      const viaBearer = await t
        .http()
        .post(ROUTES.callback)
        .set(...bearer(accessToken))
        .expect(401);
      expectFailure(viaBearer.body, 401, refused);
    });
  });

  describe('mail provider HTTP Basic', () => {
    const refused = 'Missing or invalid Basic credentials';

    async function expectChallenge(headers?: [string, string]): Promise<void> {
      const req = t.http().post(ROUTES.basic);
      if (headers) void req.set(...headers);
      const res = await req.expect(401);
      expectFailure(res.body, 401, refused);
      expect(res.headers['www-authenticate']).toBe('Basic realm="mail-provider"');
    }

    it('refuses a request without credentials with 401 and the Basic challenge', async () => {
      await expectChallenge();
    });

    it('refuses a wrong password, a wrong user and a malformed header', async () => {
      await expectChallenge(basicAuth(WEBHOOK_USER, `${WEBHOOK_PASSWORD}x`));
      await expectChallenge(basicAuth('someone-else', WEBHOOK_PASSWORD));
      await expectChallenge(['authorization', 'Basic !!!not-base64!!!']);
      await expectChallenge(['authorization', `Basic ${Buffer.from('no-colon').toString('base64')}`]);
    });

    it('refuses the other machine credentials and an access token', async () => {
      await expectChallenge(bearer(accessToken));
      await expectChallenge(bearer(INTERNAL_API_KEY));
      await expectChallenge(['x-api-key', INTERNAL_API_KEY]);
      await expectChallenge(['x-callback-token', PAYMENT_CALLBACK_TOKEN]);
    });

    it('accepts the right user and password (200)', async () => {
      const res = await t
        .http()
        .post(ROUTES.basic)
        .set(...basicAuth(WEBHOOK_USER, WEBHOOK_PASSWORD))
        .expect(200);
      expectPassed(res.body, 'basic');
      expect(res.headers['www-authenticate']).toBeUndefined();
    });
  });
});

describe('Mail provider HTTP Basic during a rotation', () => {
  const ROTATION = 'old:pw1,new:pw2';
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      imports: [TestControllersModule],
      smtp: false,
      env: { MAIL_PROVIDER_WEBHOOK_USER: 'X', MAIL_PROVIDER_WEBHOOK_PASSWORD: ROTATION },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['old', 'pw1'],
    ['new', 'pw2'],
    // mailProviderPairs(): USER:PASSWORD is always accepted, even when PASSWORD is a rotation list.
    ['X', ROTATION],
  ])('accepts %s:%s', async (user, password) => {
    const res = await t
      .http()
      .post(ROUTES.basic)
      .set(...basicAuth(user, password))
      .expect(200);
    expectPassed(res.body, 'basic');
  });

  it.each([
    ['X', 'pw1'],
    ['X', 'old:pw1'],
    ['old', 'pw2'],
    ['new', 'pw1'],
    ['old', 'pw1,new:pw2'],
    // A colon in the password is part of it (RFC 7617): `old:pw1:junk` is not `old:pw1`.
    ['old', 'pw1:junk'],
  ])('refuses %s:%s with the Basic challenge', async (user, password) => {
    const res = await t
      .http()
      .post(ROUTES.basic)
      .set(...basicAuth(user, password))
      .expect(401);
    expectFailure(res.body, 401, 'Missing or invalid Basic credentials');
    expect(res.headers['www-authenticate']).toBe('Basic realm="mail-provider"');
  });
});
