import { createPublicKey } from 'node:crypto';
import { Repository } from 'typeorm';
import { EncryptionService } from '../src/common/crypto/encryption.service';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Domain } from '../src/modules/domains/entities/domain.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { TestDnsServer, splitTxt } from './support/dns-server';
import {
  bearer,
  countRows,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const API_KEY = 'internal-api-key-for-tests-0123456789abcdef';
const SPF_INCLUDE = '_spf.relay.test';
const RETURN_PATH_HOST = 'rp.relay.test';

type Owner = Awaited<ReturnType<typeof createActiveUser>>;

describe('Sender domains (/api/v1/domains, /api/v1/admins/domains)', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let domains: Repository<Domain>;
  let admin: CreatedAdmin;
  let owner: Owner;

  const add = (who: { accessToken: string }, name: unknown) =>
    t
      .http()
      .post('/api/v1/domains')
      .set(...bearer(who.accessToken))
      .send({ name });
  const verify = (who: { accessToken: string }, uuid: string) =>
    t
      .http()
      .post(`/api/v1/domains/${uuid}/verify`)
      .set(...bearer(who.accessToken));

  /** Publishes in the test DNS server what the domain's records ask for (all of them, right). */
  function publish(domain: {
    name: string;
    records: Array<{ purpose: string; host: string; value: string }>;
  }) {
    const at = (purpose: string) => domain.records.find((r) => r.purpose === purpose)!;
    dns.zone.set(domain.name, {
      txt: [[at('ownership').value], [at('spf').value], ['google-site-verification=x']],
    });
    dns.zone.set(at('dkim').host, { txt: [splitTxt(at('dkim').value)] });
    dns.zone.set(at('dmarc').host, { txt: [['v=DMARC1; p=none;']] });
    dns.zone.set(at('return-path').host, { cname: `${RETURN_PATH_HOST}.` });
  }

  async function addDomain(who: Owner, name: string) {
    const res = await add(who, name).expect(201);
    return res.body.data as {
      uuid: string;
      name: string;
      records: Array<{ purpose: string; host: string; value: string }>;
    };
  }

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    dns.silent.add('slow.test');
    t = await createTestApp({
      env: {
        DNS_SERVERS: dns.address,
        // A query the server never answers ends after 1 s (5 s by default): ample for loopback.
        DNS_TIMEOUT_MS: '1000',
        SPF_INCLUDE,
        RETURN_PATH_PREFIX: 'bounce',
        RETURN_PATH_HOST,
        INTERNAL_API_KEY: API_KEY,
      },
    });
    domains = t.dataSource.getRepository(Domain);
    admin = await createAdmin(t, 'admin');
    owner = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
    await dns.stop();
  });

  describe('adding', () => {
    it('answers the domain with its records to publish, all unchecked, and keeps the DKIM key encrypted', async () => {
      const res = await add(owner, '  Acme-Mail.Test. ').expect(201);
      expect(res.body).toMatchObject({ status: 'success', code: 201 });
      const d = res.body.data;
      const selector = `rs${new Date().getUTCFullYear()}${String(new Date().getUTCMonth() + 1).padStart(2, '0')}`;
      expect(d).toEqual({
        uuid: expect.any(String),
        companyUuid: owner.companyUuid,
        name: 'acme-mail.test',
        status: 'pending',
        verificationToken: expect.stringMatching(/^[0-9a-f]{32}$/),
        selector,
        dkimPublicKey: expect.any(String),
        records: [
          {
            purpose: 'ownership',
            type: 'TXT',
            host: 'acme-mail.test',
            value: `relay-verification=${d.verificationToken}`,
            required: true,
            status: 'unchecked',
            detail: '',
            checkedAt: null,
          },
          {
            purpose: 'spf',
            type: 'TXT',
            host: 'acme-mail.test',
            value: `v=spf1 include:${SPF_INCLUDE} ~all`,
            required: true,
            status: 'unchecked',
            detail: '',
            checkedAt: null,
          },
          {
            purpose: 'dkim',
            type: 'TXT',
            host: `${selector}._domainkey.acme-mail.test`,
            value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}`,
            required: true,
            status: 'unchecked',
            detail: '',
            checkedAt: null,
          },
          {
            purpose: 'dmarc',
            type: 'TXT',
            host: '_dmarc.acme-mail.test',
            value: 'v=DMARC1; p=none;',
            required: false,
            status: 'unchecked',
            detail: '',
            checkedAt: null,
          },
          {
            purpose: 'return-path',
            type: 'CNAME',
            host: 'bounce.acme-mail.test',
            value: RETURN_PATH_HOST,
            required: false,
            status: 'unchecked',
            detail: '',
            checkedAt: null,
          },
        ],
        lastCheckedAt: null,
        verifiedAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE KEY|dkimPrivateKey/);
      const key = createPublicKey({
        key: Buffer.from(d.dkimPublicKey, 'base64'),
        format: 'der',
        type: 'spki',
      });
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);

      const row = await domains
        .createQueryBuilder('d')
        .addSelect('d.dkimPrivateKey')
        .where('d.uuid = :uuid', { uuid: d.uuid })
        .getOneOrFail();
      expect(row.dkimPrivateKey).not.toContain('PRIVATE KEY');
      expect(t.app.get(EncryptionService).decrypt(row.dkimPrivateKey)).toMatch(
        /^-----BEGIN PRIVATE KEY-----/,
      );
    });

    it('stores an internationalised name as punycode', async () => {
      const res = await add(owner, 'Bücher.test').expect(201);
      expect(res.body.data.name).toBe('xn--bcher-kva.test');
    });

    it.each([
      ['an IP address', '192.0.2.1'],
      ['one label', 'localhost'],
      ['a scheme', 'https://acme.test'],
      ['a path', 'acme.test/path'],
      ['an address', 'news@acme.test'],
      ['a port', 'acme.test:25'],
      [
        'over 253 characters',
        `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.eeeeeeee.test`,
      ],
      ['a label over 63 characters', `${'a'.repeat(64)}.test`],
      ['a hyphen at a label end', 'acme-.test'],
      ['null', null],
      ['a number', 42],
    ])('refuses %s (400) and stores nothing', async (_, name) => {
      const before = await countRows(t, 'domains');
      const res = await add(owner, name).expect(400);
      expectFailure(res.body, 400);
      expect(JSON.stringify(res.body)).toContain('name');
      expect(await countRows(t, 'domains')).toBe(before);
    });

    it('refuses a domain the company already added (409)', async () => {
      await add(owner, 'twice.test').expect(201);
      expectFailure((await add(owner, 'TWICE.test').expect(409)).body, 409, 'Domain already added');
    });

    it('lets a member read but not add (403)', async () => {
      const member = await createActiveUser(t);
      const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
      await t.dataSource
        .getRepository(User)
        .update({ uuid: member.userUuid }, { companyId: company.id, companyRole: 'member' });
      expectFailure((await add(member, 'member.test').expect(403)).body, 403);
      const list = await t
        .http()
        .get('/api/v1/domains')
        .set(...bearer(member.accessToken))
        .expect(200);
      expect(list.body.data.items.length).toBeGreaterThan(0);
    });
  });

  describe('verifying against live DNS', () => {
    it('verifies a domain whose records are right, notifies the owner, and the relay then knows its sender domain', async () => {
      const d = await addDomain(owner, 'good.test');
      publish(d);
      const res = await verify(owner, d.uuid).expect(200);
      expect(res.body.data).toMatchObject({
        status: 'verified',
        verifiedAt: expect.any(String),
        lastCheckedAt: expect.any(String),
      });
      for (const record of res.body.data.records) {
        expect([record.purpose, record.status, record.checkedAt]).toEqual([
          record.purpose,
          'ok',
          expect.any(String),
        ]);
      }
      expect(await domains.findOneByOrFail({ uuid: d.uuid })).toMatchObject({ status: 'verified' });
      const ownerRow = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: owner.userUuid });
      expect(
        await t.dataSource
          .getRepository(Notification)
          .countBy({ userId: ownerRow.id, type: 'domain.verified' }),
      ).toBe(1);

      const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
      await t.dataSource
        .getRepository(Company)
        .update(
          { id: company.id },
          { packageUuid: company.uuid, periodEnd: new Date(Date.now() + 86_400_000), quota: 10 },
        );
      const decision = await t
        .http()
        .post('/api/internal/relay-status')
        .set('x-api-key', API_KEY)
        .send({
          relayUsername: company.relayUsername,
          sender: 'news@GOOD.test',
          recipients: ['jo@example.net'],
        })
        .expect(200);
      expect(decision.body.data).toMatchObject({
        allowed: true,
        companyUuid: owner.companyUuid,
        senderDomainVerified: true,
      });

      // Another company cannot add a name verified by this one.
      const other = await createActiveUser(t);
      expectFailure(
        (await add(other, 'good.test').expect(409)).body,
        409,
        'Domain is verified by another company',
      );
    });

    it('allows one verification per 10 s per domain (429 with retry-after)', async () => {
      const d = await addDomain(owner, 'twice-verified.test');
      await verify(owner, d.uuid).expect(200);
      const res = await verify(owner, d.uuid).expect(429);
      expectFailure(res.body, 429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(10);
      // The admin route counts in the same window.
      await t
        .http()
        .post(`/api/v1/admins/domains/${d.uuid}/verify`)
        .set(...bearer(admin.accessToken))
        .expect(429);
    });

    it('says why a broken domain is not verified, and leaves it pending', async () => {
      const d = await addDomain(owner, 'broken.test');
      publish(d);
      const dkim = d.records.find((r) => r.purpose === 'dkim')!;
      dns.zone.set('broken.test', {
        txt: [
          [d.records[0].value],
          ['v=spf1 include:_spf.google.com ~all'],
          [`v=spf1 include:${SPF_INCLUDE} -all`],
        ],
      });
      dns.zone.set(dkim.host, {
        txt: [['v=DKIM1; k=rsa; p=', 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong']],
      });
      dns.zone.delete('_dmarc.broken.test');
      dns.zone.set('bounce.broken.test', { cname: 'elsewhere.test' });
      const res = await verify(owner, d.uuid).expect(200);
      expect(res.body.data.status).toBe('pending');
      const byPurpose = Object.fromEntries(
        res.body.data.records.map((r: { purpose: string; status: string; detail: string }) => [
          r.purpose,
          [r.status, r.detail],
        ]),
      );
      expect(byPurpose).toEqual({
        ownership: ['ok', expect.any(String)],
        spf: ['invalid', expect.stringContaining('2 v=spf1 records')],
        dkim: ['invalid', expect.stringContaining('differs')],
        dmarc: ['missing', expect.any(String)],
        'return-path': ['invalid', expect.stringContaining('elsewhere.test')],
      });
      expect(await domains.findOneByOrFail({ uuid: d.uuid })).toMatchObject({
        status: 'pending',
        verifiedAt: null,
      });
    });

    it('marks records "DNS timeout" when the server never answers, and answers 200', async () => {
      const d = await addDomain(owner, 'slow.test');
      const started = Date.now();
      const res = await verify(owner, d.uuid).expect(200);
      // The queries ran in parallel, each bounded by DNS_TIMEOUT_MS (1 s), not by the default 5 s.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.body.data.status).toBe('pending');
      for (const record of res.body.data.records)
        expect([record.status, record.detail]).toEqual(['missing', 'DNS timeout']);
    });
  });

  describe('the daily re-check (recheck-domains)', () => {
    it('fails a verified domain that lost its SPF record (owner notified), and verifies it again once restored', async () => {
      const someone = await createActiveUser(t);
      const d = await addDomain(someone, 'recheck.test');
      publish(d);
      await verify(someone, d.uuid).expect(200);
      const superAdmin = await createAdmin(t, 'superAdmin');
      const runJob = () =>
        t
          .http()
          .get('/api/v1/t3st-job?job=recheck-domains')
          .set(...bearer(superAdmin.accessToken))
          .expect(200);

      dns.zone.set('recheck.test', { txt: [[d.records[0].value]] });
      const failed = await runJob();
      expect(failed.body.data.items).toEqual([
        {
          job: 'recheck-domains',
          ok: true,
          skipped: false,
          affected: expect.any(Number),
          ms: expect.any(Number),
        },
      ]);
      expect(failed.body.data.items[0].affected).toBeGreaterThanOrEqual(1);
      expect(await domains.findOneByOrFail({ uuid: d.uuid })).toMatchObject({ status: 'failed' });
      const ownerRow = await t.dataSource.getRepository(User).findOneByOrFail({ uuid: someone.userUuid });
      expect(
        await t.dataSource
          .getRepository(Notification)
          .countBy({ userId: ownerRow.id, type: 'domain.failed' }),
      ).toBe(1);

      publish(d);
      await runJob();
      expect(await domains.findOneByOrFail({ uuid: d.uuid })).toMatchObject({ status: 'verified' });
    });
  });

  describe('reading and deleting', () => {
    it('lists the company’s domains by status, reads one, and hides other companies’ (404)', async () => {
      const list = await t
        .http()
        .get('/api/v1/domains?status=verified')
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(list.body.data.items.map((d: { name: string }) => d.name)).toEqual(['good.test']);
      expect(list.body.data.meta).toMatchObject({ totalItems: 1 });
      const [good] = list.body.data.items;
      const one = await t
        .http()
        .get(`/api/v1/domains/${good.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(one.body.data).toEqual(good);

      const stranger = await createActiveUser(t);
      expectFailure(
        (
          await t
            .http()
            .get(`/api/v1/domains/${good.uuid}`)
            .set(...bearer(stranger.accessToken))
            .expect(404)
        ).body,
        404,
        'Domain not found',
      );
      await verify(stranger, good.uuid).expect(404);
      await t
        .http()
        .delete(`/api/v1/domains/${good.uuid}`)
        .set(...bearer(stranger.accessToken))
        .expect(404);
      expectFailure(
        (
          await t
            .http()
            .get('/api/v1/domains/not-a-uuid')
            .set(...bearer(owner.accessToken))
            .expect(400)
        ).body,
        400,
      );
    });

    it('lets admins list by company and name, count them in the company detail, and delete one', async () => {
      const list = await t
        .http()
        .get(`/api/v1/admins/domains?companyUuid=${owner.companyUuid}&search=GOOD`)
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(list.body.data.items.map((d: { name: string }) => d.name)).toEqual(['good.test']);
      const detail = await t
        .http()
        .get(`/api/v1/admins/companies/${owner.companyUuid}`)
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(detail.body.data.domainsCount).toBe(
        await domains.countBy({ company: { uuid: owner.companyUuid } }),
      );

      const [good] = list.body.data.items;
      await t
        .http()
        .delete(`/api/v1/admins/domains/${good.uuid}`)
        .set(...bearer(admin.accessToken))
        .expect(200);
      expect(await domains.findOneBy({ uuid: good.uuid })).toBeNull();
      // The relay forgets the deleted domain at once.
      const decision = await t
        .http()
        .post('/api/internal/relay-status')
        .set('x-api-key', API_KEY)
        .send({ sender: 'news@good.test' })
        .expect(200);
      expect(decision.body.data).toMatchObject({ allowed: false, companyUuid: null });
      await t
        .http()
        .get(`/api/v1/admins/domains/${good.uuid}`)
        .set(...bearer(admin.accessToken))
        .expect(404);
    });

    it('lets the owner delete a domain', async () => {
      const d = await addDomain(owner, 'deleted.test');
      const res = await t
        .http()
        .delete(`/api/v1/domains/${d.uuid}`)
        .set(...bearer(owner.accessToken))
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', data: {} });
      expect(await domains.findOneBy({ uuid: d.uuid })).toBeNull();
    });
  });
});
