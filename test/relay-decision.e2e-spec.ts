import { Repository } from 'typeorm';
import { CompanyRelayLookup } from '../src/modules/companies/company-relay-lookup';
import { Company } from '../src/modules/companies/entities/company.entity';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  storeDomain,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const API_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const DAY = 86_400_000;

describe('Relay decision (POST /api/internal/relay-status)', () => {
  let t: TestApp;
  let admin: CreatedAdmin;
  let companies: Repository<Company>;
  let suppression: Repository<SuppressionEntry>;

  const decide = (body: unknown, key: string | null = API_KEY) => {
    const req = t.http().post('/api/internal/relay-status');
    if (key !== null) req.set('x-api-key', key);
    return req.send(body as object);
  };

  /** What an admin changes of a company through PATCH /api/v1/admins/companies/:uuid. */
  const adminPatch = (c: Company, body: object) =>
    t
      .http()
      .patch(`/api/v1/admins/companies/${c.uuid}`)
      .set(...bearer(admin.accessToken))
      .send(body)
      .expect(200);

  /** The company's allowed networks, set by its owner through the API (the change is announced). */
  const setIps = (c: Company & { token: string }, ips: string[]) =>
    t
      .http()
      .put(`/api/v1/companies/${c.uuid}/allowed-ips`)
      .set(...bearer(c.token))
      .send({ ips })
      .expect(200);

  /** A company with its owner, in the state given (written before anything asked about it). */
  async function company(state: Partial<Company> = {}): Promise<Company & { token: string }> {
    const owner = await createActiveUser(t);
    const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    const paid: Partial<Company> = {
      packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
      periodStart: new Date(Date.now() - DAY),
      periodEnd: new Date(Date.now() + 30 * DAY),
      quota: 100,
      used: 10,
    };
    await companies.update({ id: found.id }, { ...paid, ...state });
    return Object.assign(await companies.findOneByOrFail({ id: found.id }), { token: owner.accessToken });
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { INTERNAL_API_KEY: API_KEY } });
    companies = t.dataSource.getRepository(Company);
    suppression = t.dataSource.getRepository(SuppressionEntry);
    admin = await createAdmin(t, 'admin');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('who may ask, and what', () => {
    it('refuses a missing or wrong API key (401)', async () => {
      expectFailure((await decide({ relayUsername: 'r-x' }, null).expect(401)).body, 401);
      expectFailure((await decide({ relayUsername: 'r-x' }, 'wrong-key').expect(401)).body, 401);
    });

    it('needs one of relayUsername, clientAddress or sender (400)', async () => {
      const res = await decide({ recipients: ['jo@example.net'] }).expect(400);
      expectFailure(res.body, 400, 'One of relayUsername, clientAddress or sender is required');
    });

    it.each([
      [{ clientAddress: 'not-an-ip' }, 'clientAddress'],
      [{ relayUsername: null }, 'relayUsername'],
      [{ sender: 'x'.repeat(321) }, 'sender'],
      [{ sender: 42 }, 'sender'],
      [{ relayUsername: 'r-x', recipients: ['jo@example.net', 'nope'] }, 'recipients'],
      [{ relayUsername: 'r-x', recipients: 'jo@example.net' }, 'recipients'],
      [{ relayUsername: 'r-x', size: -1 }, 'size'],
      [{ relayUsername: 'r-x', extra: 1 }, 'extra'],
    ])('%j is a 400 naming %s', async (body, field) => {
      const res = await decide(body).expect(400);
      expectFailure(res.body, 400);
      expect(JSON.stringify(res.body.error)).toContain(field);
    });
  });

  describe('the company and its state', () => {
    it('an unknown account is a 200 with allowed: false', async () => {
      const res = await decide({ relayUsername: 'r-nobody00', recipients: ['jo@example.net'] }).expect(200);
      expect(res.body).toMatchObject({ status: 'success', code: 200 });
      expect(res.body.data).toEqual({
        allowed: false,
        action: 'REJECT unknown account',
        status: null,
        companyUuid: null,
        reason: 'unknown account',
        quota: null,
        senderDomainVerified: null,
        rejectedRecipients: [],
      });
    });

    it('an active, paid company identified by its relay username may relay', async () => {
      const acme = await company();
      const res = await decide({
        relayUsername: acme.relayUsername,
        recipients: ['jo@example.net'],
        size: 2048,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        allowed: true,
        action: 'OK',
        status: 'active',
        companyUuid: acme.uuid,
        reason: null,
        quota: { limit: 100, used: 10, remaining: 90 },
        senderDomainVerified: null,
        rejectedRecipients: [],
      });
    });

    it.each<[string, Partial<Company>, string, string]>([
      [
        'suspended',
        { status: 'suspended', suspendedReason: 'abuse' },
        'REJECT account suspended',
        'suspended',
      ],
      [
        'never paid',
        { packageUuid: null, periodStart: null, periodEnd: null, quota: 0, used: 0 },
        'REJECT no active package',
        'no_package',
      ],
      [
        'expired',
        { periodEnd: new Date(Date.now() - 1000) },
        'DEFER_IF_PERMIT subscription period expired',
        'expired',
      ],
      ['over quota', { quota: 100, used: 100 }, 'DEFER_IF_PERMIT quota exceeded', 'quota_exceeded'],
    ])('a %s company gets %s', async (_, state, action, status) => {
      const acme = await company(state);
      const res = await decide({ relayUsername: acme.relayUsername }).expect(200);
      expect(res.body.data).toMatchObject({
        allowed: false,
        action,
        status,
        companyUuid: acme.uuid,
        reason: action.slice(action.indexOf(' ') + 1),
      });
    });

    it('refuses a sender whose domain is not a verified domain of the company', async () => {
      const acme = await company();
      const res = await decide({
        relayUsername: acme.relayUsername,
        sender: 'news@unverified.example',
      }).expect(200);
      expect(res.body.data).toMatchObject({
        allowed: false,
        action: 'REJECT sender domain not verified',
        status: 'active',
        senderDomainVerified: false,
      });
      // The null sender of a bounce is not a domain to verify.
      const bounce = await decide({ relayUsername: acme.relayUsername, sender: '' }).expect(200);
      expect(bounce.body.data).toMatchObject({ allowed: true, action: 'OK', senderDomainVerified: null });
    });
  });

  describe('the cache follows the company state', () => {
    it('a suspension by an admin is refused on the very next call, and the resumption allowed', async () => {
      const acme = await company();
      expect((await decide({ relayUsername: acme.relayUsername }).expect(200)).body.data.allowed).toBe(true);
      await adminPatch(acme, { status: 'suspended', suspendedReason: 'abuse report' });
      const refused = await decide({ relayUsername: acme.relayUsername }).expect(200);
      expect(refused.body.data).toMatchObject({ allowed: false, action: 'REJECT account suspended' });
      await adminPatch(acme, { status: 'active' });
      expect((await decide({ relayUsername: acme.relayUsername }).expect(200)).body.data.action).toBe('OK');
    });

    it('a suspension while the company is being read is refused on the next call (the read is not kept)', async () => {
      const acme = await company();
      const lookup = t.app.get(CompanyRelayLookup);
      const read = lookup.byRelayUsername.bind(lookup);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const reads = jest.spyOn(lookup, 'byRelayUsername').mockImplementationOnce(async (username) => {
        const facts = await read(username); // read before the suspension, answered after it
        await held;
        return facts;
      });
      try {
        const during = t.app.get(RelayDecisionService).decide({ relayUsername: acme.relayUsername });
        await adminPatch(acme, { status: 'suspended', suspendedReason: 'abuse report' });
        release();
        await during;
        const next = await decide({ relayUsername: acme.relayUsername }).expect(200);
        expect(next.body.data).toMatchObject({ allowed: false, action: 'REJECT account suspended' });
      } finally {
        reads.mockRestore();
      }
    });

    it('a quota override takes effect on the next call', async () => {
      const acme = await company({ quota: 100, used: 50 });
      expect((await decide({ relayUsername: acme.relayUsername }).expect(200)).body.data.quota).toEqual({
        limit: 100,
        used: 50,
        remaining: 50,
      });
      await adminPatch(acme, { quota: 50 });
      const res = await decide({ relayUsername: acme.relayUsername }).expect(200);
      expect(res.body.data).toMatchObject({
        allowed: false,
        action: 'DEFER_IF_PERMIT quota exceeded',
        quota: { limit: 50, used: 50, remaining: 0 },
      });
    });
  });

  describe('who may relay: SMTP AUTH or an allowed network, never the sender alone', () => {
    const verifiedDomain = (c: Company, name: string) => storeDomain(t, c.id, name);
    const NOT_AUTHENTICATED = {
      allowed: false,
      action: 'REJECT Authentication required',
      status: null,
      reason: 'not_authenticated',
      quota: null,
      senderDomainVerified: null,
      rejectedRecipients: [],
    };

    it("a client with neither AUTH nor an allowed network is refused, whatever company its sender's verified domain names", async () => {
      const acme = await company();
      await verifiedDomain(acme, 'who-may-acme.test');
      const claimed = await decide({
        clientAddress: '203.0.113.200',
        sender: 'ceo@who-may-acme.test',
        recipients: ['jo@example.net'],
      }).expect(200);
      // The company the sender names is given for information, never as permission.
      expect(claimed.body.data).toEqual({ ...NOT_AUTHENTICATED, companyUuid: acme.uuid });
      const senderOnly = await decide({ sender: 'ceo@who-may-acme.test' }).expect(200);
      expect(senderOnly.body.data).toEqual({ ...NOT_AUTHENTICATED, companyUuid: acme.uuid });
      const nobody = await decide({ clientAddress: '203.0.113.200', sender: 'x@who-knows.test' }).expect(200);
      expect(nobody.body.data).toEqual({ ...NOT_AUTHENTICATED, companyUuid: null });
      const bounce = await decide({ clientAddress: '203.0.113.200', sender: '' }).expect(200);
      expect(bounce.body.data).toEqual({ ...NOT_AUTHENTICATED, companyUuid: null });
      // The same sender with the company's relay username, or from its network, relays.
      expect(
        (await decide({ relayUsername: acme.relayUsername, sender: 'ceo@who-may-acme.test' }).expect(200))
          .body.data,
      ).toMatchObject({ allowed: true, action: 'OK', companyUuid: acme.uuid, senderDomainVerified: true });
      await setIps(acme, ['203.0.113.200']);
      expect(
        (await decide({ clientAddress: '203.0.113.200', sender: 'ceo@who-may-acme.test' }).expect(200)).body
          .data,
      ).toMatchObject({ allowed: true, action: 'OK', companyUuid: acme.uuid });
      await setIps(acme, []);
    });

    it("a shared network's client naming a third company's domain is not that company's client", async () => {
      const one = await company();
      const two = await company();
      const third = await company();
      await verifiedDomain(one, 'shared-one.test');
      await verifiedDomain(third, 'shared-third.test');
      await setIps(one, ['198.18.0.0/24']);
      await setIps(two, ['198.18.0.0/24']);
      const ofOne = await decide({ clientAddress: '198.18.0.9', sender: 'a@shared-one.test' }).expect(200);
      expect(ofOne.body.data).toMatchObject({ allowed: true, companyUuid: one.uuid });
      const ofThird = await decide({ clientAddress: '198.18.0.9', sender: 'a@shared-third.test' }).expect(
        200,
      );
      expect(ofThird.body.data).toEqual({ ...NOT_AUTHENTICATED, companyUuid: third.uuid });
      await setIps(one, []);
      await setIps(two, []);
    });

    it('an unknown relay username is an unknown account, even with a sender some company verified', async () => {
      const acme = await company();
      await verifiedDomain(acme, 'unknown-user-acme.test');
      const res = await decide({ relayUsername: 'r-nobody01', sender: 'ceo@unknown-user-acme.test' }).expect(
        200,
      );
      expect(res.body.data).toMatchObject({
        allowed: false,
        action: 'REJECT unknown account',
        companyUuid: null,
      });
    });
  });

  describe('allowed IPs', () => {
    it('identifies the one company whose networks hold the client address, at once after a change', async () => {
      const acme = await company();
      expect((await decide({ clientAddress: '198.51.100.77' }).expect(200)).body.data.action).toBe(
        'REJECT Authentication required',
      );
      await setIps(acme, ['198.51.100.0/24', '2001:db8:77::/48']);
      for (const clientAddress of ['198.51.100.77', '::ffff:198.51.100.77', '2001:db8:77::25']) {
        const res = await decide({ clientAddress }).expect(200);
        expect(res.body.data).toMatchObject({ allowed: true, companyUuid: acme.uuid });
      }
      expect((await decide({ clientAddress: '198.51.101.1' }).expect(200)).body.data.companyUuid).toBeNull();
      await setIps(acme, []);
      expect((await decide({ clientAddress: '198.51.100.77' }).expect(200)).body.data.companyUuid).toBeNull();
    });

    it('a network shared by two companies identifies neither by itself', async () => {
      const one = await company();
      const two = await company();
      await setIps(one, ['192.0.2.0/24']);
      await setIps(two, ['192.0.2.10']);
      const res = await decide({ clientAddress: '192.0.2.10' }).expect(200);
      expect(res.body.data).toMatchObject({
        allowed: false,
        companyUuid: null,
        action: 'REJECT Authentication required',
        reason: 'not_authenticated',
      });
      const onlyOne = await decide({ clientAddress: '192.0.2.11' }).expect(200);
      expect(onlyOne.body.data.companyUuid).toBe(one.uuid);
      await setIps(one, []);
      await setIps(two, []);
    });

    it('loads the table of networks once for the concurrent decisions that find it stale', async () => {
      const acme = await company();
      await setIps(acme, ['203.0.113.64/26']); // the change empties the table
      const loads = jest.spyOn(t.app.get(CompanyRelayLookup), 'withAllowedIps');
      try {
        const decisions = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            t.app.get(RelayDecisionService).decide({ clientAddress: `203.0.113.${64 + i}` }),
          ),
        );
        expect(decisions.map((d) => d.companyUuid)).toEqual(Array(20).fill(acme.uuid));
        expect(loads).toHaveBeenCalledTimes(1);
      } finally {
        loads.mockRestore();
        await setIps(acme, []);
      }
    });
  });

  describe('suppressed recipients', () => {
    it('lists the recipients on the company’s list or the global one, and still allows the message', async () => {
      const acme = await company();
      const other = await company();
      await suppression.save([
        suppression.create({
          companyId: acme.id,
          email: 'bounced@example.net',
          reason: 'hard_bounce',
          source: 'log',
        }),
        suppression.create({
          companyId: null,
          email: 'global@example.net',
          reason: 'complaint',
          source: 'admin',
        }),
        suppression.create({
          companyId: acme.id,
          email: 'both@example.net',
          reason: 'unsubscribe',
          source: 'user',
        }),
        suppression.create({
          companyId: null,
          email: 'both@example.net',
          reason: 'hard_bounce',
          source: 'admin',
        }),
        suppression.create({
          companyId: acme.id,
          email: 'expired@example.net',
          reason: 'manual',
          source: 'user',
          expiresAt: new Date(Date.now() - 1000),
        }),
        suppression.create({
          companyId: acme.id,
          email: 'expiring@example.net',
          reason: 'manual',
          source: 'user',
          expiresAt: new Date(Date.now() + 60_000),
        }),
        suppression.create({
          companyId: other.id,
          email: 'others@example.net',
          reason: 'manual',
          source: 'user',
        }),
      ]);
      const res = await decide({
        relayUsername: acme.relayUsername,
        recipients: [
          'clean@example.org',
          'Bounced@Example.NET',
          'global@example.net',
          'both@example.net',
          'expired@example.net',
          'others@example.net',
          'bounced@example.net',
          'expiring@example.net',
        ],
      }).expect(200);
      expect(res.body.data).toMatchObject({ allowed: true, action: 'OK' });
      expect(res.body.data.rejectedRecipients).toEqual([
        { email: 'bounced@example.net', reason: 'hard_bounce' },
        { email: 'global@example.net', reason: 'complaint' },
        { email: 'both@example.net', reason: 'unsubscribe' },
        { email: 'expiring@example.net', reason: 'manual' },
      ]);
    });

    it('answers concurrent decisions of different companies each from its own list', async () => {
      const companies = await Promise.all(Array.from({ length: 4 }, () => company()));
      await suppression.save(
        companies.flatMap((c, i) =>
          i % 2
            ? []
            : [
                suppression.create({
                  companyId: c.id,
                  email: 'shared@example.net',
                  reason: 'manual',
                  source: 'user',
                }),
              ],
        ),
      );
      const answers = await Promise.all(
        companies.flatMap((c) =>
          Array.from({ length: 5 }, () =>
            decide({
              relayUsername: c.relayUsername,
              recipients: ['shared@example.net', 'clean@example.org'],
            }).expect(200),
          ),
        ),
      );
      answers.forEach((res, n) => {
        const suppressed = Math.floor(n / 5) % 2 === 0;
        expect(res.body.data.rejectedRecipients).toEqual(
          suppressed ? [{ email: 'shared@example.net', reason: 'manual' }] : [],
        );
      });
    });
  });
});

describe('Relay decision with RELAY_REQUIRE_VERIFIED_DOMAIN=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { INTERNAL_API_KEY: API_KEY, RELAY_REQUIRE_VERIFIED_DOMAIN: 'false' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets an unverified sender domain through, and says it is not verified', async () => {
    const owner = await createActiveUser(t);
    const companies = t.dataSource.getRepository(Company);
    await companies.update(
      { uuid: owner.companyUuid },
      {
        packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
        periodEnd: new Date(Date.now() + DAY),
        quota: 10,
      },
    );
    const { relayUsername } = await companies.findOneByOrFail({ uuid: owner.companyUuid });
    const res = await t
      .http()
      .post('/api/internal/relay-status')
      .set('x-api-key', API_KEY)
      .send({ relayUsername, sender: 'news@unverified.example' })
      .expect(200);
    expect(res.body.data).toMatchObject({ allowed: true, action: 'OK', senderDomainVerified: false });
  });
});
