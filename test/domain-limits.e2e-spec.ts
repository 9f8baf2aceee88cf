import { generateKeyPairSync } from 'node:crypto';
import { Repository } from 'typeorm';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DkimKeyPair, DkimKeyPairs } from '../src/modules/domains/dkim-key-pairs';
import { Domain } from '../src/modules/domains/entities/domain.entity';
import { bearer, countRows, createActiveUser, expectFailure, loginUser } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const LIMIT = 10;
const LIMIT_MESSAGE = `Domain limit reached: a company has at most ${LIMIT} domains`;

type Owner = Awaited<ReturnType<typeof createActiveUser>>;

/**
 * Nothing one company does stalls the others (resources.md "Domain"): at most
 * MAX_DOMAINS_PER_COMPANY domains a company, and DKIM keys made one at a time per process, off
 * the thread pool logins hash passwords on.
 */
describe('Sender domain limits (MAX_DOMAINS_PER_COMPANY, one DKIM key at a time)', () => {
  let t: TestApp;
  let domains: Repository<Domain>;
  let keyPairs: DkimKeyPairs;
  /** Generations running now, the most ever running at once, and how many started. */
  let running: number;
  let peak: number;
  let started: number;
  let generate: jest.SpyInstance<Promise<DkimKeyPair>, []>;

  const add = (who: { accessToken: string }, name: string) =>
    t
      .http()
      .post('/api/v1/domains')
      .set(...bearer(who.accessToken))
      .send({ name });

  const countOf = async (owner: Owner) => {
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    return domains.countBy({ companyId: company.id });
  };

  /** `count` domains stored directly (no key made), as if added earlier. */
  async function seed(owner: Owner, count: number) {
    const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
    await domains.save(
      Array.from({ length: count }, (_, i) =>
        domains.create({
          companyId: company.id,
          name: `seeded-${i}.${owner.companyUuid.slice(0, 8)}.test`,
          status: 'pending',
          verificationToken: 'token',
          dkimSelector: 'rs202601',
          dkimPublicKey: 'public',
          dkimPrivateKey: 'private',
          records: [],
        }),
      ),
    );
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { MAX_DOMAINS_PER_COMPANY: String(LIMIT) } });
    domains = t.dataSource.getRepository(Domain);
    keyPairs = t.app.get(DkimKeyPairs);
  });
  beforeEach(() => {
    running = 0;
    peak = 0;
    started = 0;
    // Every generation the queue starts is counted while it runs (the real RSA generation).
    const real = keyPairs.generate.bind(keyPairs);
    generate = jest.spyOn(keyPairs, 'generate').mockImplementation(async () => {
      started += 1;
      running += 1;
      peak = Math.max(peak, running);
      try {
        return await real();
      } finally {
        running -= 1;
      }
    });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t.close();
  });

  it('makes the keys of concurrent adds one at a time, and each domain gets its own', async () => {
    const owner = await createActiveUser(t);
    const answers = await Promise.all(Array.from({ length: LIMIT }, (_, i) => add(owner, `burst-${i}.test`)));
    expect(answers.map((r) => r.status)).toEqual(Array<number>(LIMIT).fill(201));
    expect(started).toBe(LIMIT);
    expect(peak).toBe(1);
    expect(keyPairs.pending).toBe(0);
    const keys = new Set(answers.map((r) => r.body.data.dkimPublicKey as string));
    expect(keys.size).toBe(LIMIT);
  });

  it('refuses one domain over the limit (409 naming it), writes nothing and makes no key', async () => {
    const owner = await createActiveUser(t);
    await seed(owner, LIMIT);
    const before = await countRows(t, 'domains');
    const res = await add(owner, 'one-too-many.test').expect(409);
    expectFailure(res.body, 409, LIMIT_MESSAGE);
    expect(await countRows(t, 'domains')).toBe(before);
    expect(started).toBe(0);
    // Another company is not held back by this one's limit.
    await add(await createActiveUser(t), 'one-too-many.test').expect(201);
  });

  it('lets exactly one of concurrent adds at limit - 1 through', async () => {
    const owner = await createActiveUser(t);
    await seed(owner, LIMIT - 1);
    // Keys at once, so the adds reach their transactions together: the lock decides, not the queue.
    const { publicKey, privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    generate.mockResolvedValue({ publicKeyBase64: publicKey.toString('base64'), privateKeyPem: privateKey });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => add(owner, `race-${i}.test`)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const refused of answers.filter((r) => r.status === 409))
      expectFailure(refused.body, 409, LIMIT_MESSAGE);
    expect(await countOf(owner)).toBe(LIMIT);
  });

  it('answers logins while 20 adds of two companies wait for their keys', async () => {
    const owners = [await createActiveUser(t), await createActiveUser(t)];
    const adds = owners.flatMap((owner, o) =>
      Array.from({ length: LIMIT }, (_, i) => add(owner, `busy-${o}-${i}.test`).then((r) => r.status)),
    );
    const logins = await Promise.all(owners.map((owner) => loginUser(t, owner.email, owner.password)));
    for (const login of logins) expect(login.accessToken).toEqual(expect.any(String));
    expect(await Promise.all(adds)).toEqual(Array<number>(2 * LIMIT).fill(201));
    expect(peak).toBe(1);
  });
});
