import { randomBytes } from 'node:crypto';
import { EncryptionService } from '../../src/common/crypto/encryption.service';
import { AdminsService } from '../../src/modules/admins/admins.service';
import { AdminRoleName } from '../../src/modules/admins/entities/admin-role.entity';
import { Company } from '../../src/modules/companies/entities/company.entity';
import { Domain, DomainStatus } from '../../src/modules/domains/entities/domain.entity';
import { TestApp } from './test-app';
import { tokenFromLink } from './smtp-sink';

export const PASSWORD = 'correct horse battery';

export const uniqueEmail = (prefix = 'user'): string =>
  `${prefix}-${randomBytes(5).toString('hex')}@example.com`;

export interface RegisteredUser {
  email: string;
  password: string;
  userUuid: string;
  companyUuid: string;
}

export interface LoggedIn {
  accessToken: string;
  refreshToken: string;
}

/** POST /api/v1/users/register; the user is `pending` until verified. */
export async function registerUser(
  t: TestApp,
  overrides: Partial<{ email: string; password: string }> = {},
): Promise<RegisteredUser> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? PASSWORD;
  const res = await t
    .http()
    .post('/api/v1/users/register')
    .send({ companyName: 'Acme Mail', fullName: 'Ada Owner', email, password })
    .expect(201);
  return { email, password, userUuid: res.body.data.user.uuid, companyUuid: res.body.data.company.uuid };
}

/** Registers, follows the verification link of the e-mail the SMTP sink received, and logs in. */
export async function createActiveUser(t: TestApp): Promise<RegisteredUser & LoggedIn> {
  const user = await registerUser(t);
  const mail = await t.smtp.waitFor(user.email, /verify/i);
  await t
    .http()
    .post('/api/v1/users/verify-email')
    .send({ token: tokenFromLink(mail, '/verify-email') })
    .expect(200);
  return { ...user, ...(await loginUser(t, user.email, user.password)) };
}

/** A member the owner invited through the API, who accepted the invitation e-mail and logged in. */
export async function createActiveMember(
  t: TestApp,
  owner: RegisteredUser & LoggedIn,
  password = 'member password 123',
): Promise<LoggedIn & { email: string; uuid: string }> {
  const email = uniqueEmail('member');
  const invited = await t
    .http()
    .post(`/api/v1/companies/${owner.companyUuid}/users`)
    .set(...bearer(owner.accessToken))
    .send({ email, fullName: 'Mia Member' })
    .expect(201);
  const mail = await t.smtp.waitFor(email, /invited/i);
  await t
    .http()
    .post('/api/v1/users/accept-invite')
    .send({ token: tokenFromLink(mail, '/accept-invite'), password })
    .expect(200);
  return { email, uuid: invited.body.data.uuid as string, ...(await loginUser(t, email, password)) };
}

/** A company with an active owner and a paid period of 30 days (quota 100, none used), as the relay sees a customer. */
export async function createPaidCompany(t: TestApp): Promise<Company> {
  const owner = await createActiveUser(t);
  const companies = t.dataSource.getRepository(Company);
  const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
  await companies.update(
    { id: found.id },
    {
      packageUuid: '5f0c6f1e-8d3a-4a57-9a43-1b2c3d4e5f60',
      periodStart: new Date(Date.now() - 86_400_000),
      periodEnd: new Date(Date.now() + 30 * 86_400_000),
      quota: 100,
      used: 0,
    },
  );
  return companies.findOneByOrFail({ id: found.id });
}

export async function loginUser(t: TestApp, email: string, password = PASSWORD): Promise<LoggedIn> {
  const res = await t.http().post('/api/v1/users/login').send({ email, password }).expect(200);
  return { accessToken: res.body.data.accessToken, refreshToken: res.body.data.refreshToken };
}

export interface CreatedAdmin extends LoggedIn {
  uuid: string;
  role: AdminRoleName;
  email: string;
  password: string;
}

/** An admin of the given role, created through the service and logged in through the API. */
export async function createAdmin(t: TestApp, roleName: AdminRoleName = 'superAdmin'): Promise<CreatedAdmin> {
  const email = uniqueEmail(roleName.toLowerCase());
  const admin = await t.app
    .get(AdminsService)
    .create({ email, fullName: `The ${roleName}`, password: PASSWORD, roleName });
  const res = await t.http().post('/api/v1/admins/login').send({ email, password: PASSWORD }).expect(200);
  return {
    uuid: admin.uuid,
    role: roleName,
    email,
    password: PASSWORD,
    accessToken: res.body.data.accessToken,
    refreshToken: res.body.data.refreshToken,
  };
}

export const bearer = (token: string): [string, string] => ['authorization', `Bearer ${token}`];

/** Row count of a table, for "nothing was written" assertions. */
/**
 * A sender domain of a company written straight into the database (no DNS check): for tests that
 * need a domain in a given state, not the domains area's behaviour. With `key`, its DKIM key pair
 * (the private key encrypted as the domains area stores it), so that the milter signs with it.
 */
export async function storeDomain(
  t: TestApp,
  companyId: number,
  name: string,
  status: DomainStatus = 'verified',
  key?: { selector: string; publicKey: string; privateKeyPem: string },
): Promise<Domain> {
  const domains = t.dataSource.getRepository(Domain);
  return domains.save(
    domains.create({
      companyId,
      name,
      status,
      verificationToken: 'token',
      dkimSelector: key?.selector ?? 'relay1',
      dkimPublicKey: key?.publicKey ?? 'public',
      dkimPrivateKey: key ? t.app.get(EncryptionService).encrypt(key.privateKeyPem) : 'private',
      records: [],
      ...(status === 'verified' && { verifiedAt: new Date() }),
    }),
  );
}

export async function countRows(t: TestApp, table: string): Promise<number> {
  const rows: Array<{ n: string | number }> = await t.dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(rows[0].n);
}

export async function countAll(
  t: TestApp,
  tables = ['users', 'contacts', 'companies', 'admins', 'refresh_token_blacklist'],
) {
  const counts: Record<string, number> = {};
  for (const table of tables) counts[table] = await countRows(t, table);
  return counts;
}

/** Asserts the failure envelope of the spec. */
export function expectFailure(body: unknown, code: number, msg?: string | RegExp): void {
  expect(body).toMatchObject({ status: 'failed', code, data: null });
  const b = body as { msg: string; error: { msg: string } };
  expect(typeof b.error.msg).toBe('string');
  expect(b.error.msg).toBe(b.msg);
  if (typeof msg === 'string') expect(b.msg).toBe(msg);
  else if (msg) expect(b.msg).toMatch(msg);
}
