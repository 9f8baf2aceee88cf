import { Admin } from '../src/modules/admins/entities/admin.entity';
import { PrincipalRepository } from '../src/modules/auth/principal.repository';
import { Company } from '../src/modules/companies/entities/company.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { createActiveUser, createAdmin } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** The access guard's hand-built lookups must read exactly what TypeORM's own queries read. */
describe('PrincipalRepository', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('reads a user with its contact and company exactly as the query builder does', async () => {
    const { userUuid, companyUuid } = await createActiveUser(t);
    // Give the company values of every kind: dates, JSON, nullable text, integers.
    await t.dataSource.getRepository(Company).update(
      { uuid: companyUuid },
      {
        periodStart: new Date('2026-11-01T00:00:00.123Z'),
        periodEnd: new Date('2026-12-01T00:00:00.456Z'),
        quota: 500,
        used: 7,
        allowedIps: ['10.0.0.0/24'],
        legalName: 'PT Acme',
      },
    );
    const users = t.dataSource.getRepository(User);
    const expected = await users
      .createQueryBuilder('user')
      .innerJoinAndSelect('user.contact', 'contact')
      .innerJoinAndSelect('user.company', 'company')
      .where('user.uuid = :uuid', { uuid: userUuid })
      .getOneOrFail();
    const principals = t.app.get(PrincipalRepository);
    const found = await principals.findUser(userUuid);
    expect(found).toEqual(expected);
    expect(found).toBeInstanceOf(User);
    expect(found?.companyId).toBe(expected.company.id);
    expect(found?.contactId).toBe(expected.contact.id);
    expect(found?.company.periodEnd).toEqual(new Date('2026-12-01T00:00:00.456Z'));
    expect(found?.company.allowedIps).toEqual(['10.0.0.0/24']);
    expect(await principals.findUser('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('reads an admin with its role exactly as the query builder does', async () => {
    const { uuid } = await createAdmin(t, 'accounting');
    const admins = t.dataSource.getRepository(Admin);
    const expected = await admins
      .createQueryBuilder('admin')
      .innerJoinAndSelect('admin.role', 'role')
      .where('admin.uuid = :uuid', { uuid })
      .getOneOrFail();
    const found = await t.app.get(PrincipalRepository).findAdmin(uuid);
    expect(found).toEqual(expected);
    expect(found?.role).toEqual({ id: 3, name: 'accounting' });
    expect(found?.isActive).toBe(true);
  });

  it('answers concurrent lookups each with its own principal, and a fresh object per caller', async () => {
    const a = await createActiveUser(t);
    const b = await createActiveUser(t);
    const admin = await createAdmin(t, 'admin');
    const principals = t.app.get(PrincipalRepository);
    const unknown = '00000000-0000-4000-8000-000000000001';
    // Started in the same turn: on PostgreSQL they share one round trip.
    const [a1, b1, a2, none, admin1] = await Promise.all([
      principals.findUser(a.userUuid),
      principals.findUser(b.userUuid),
      principals.findUser(a.userUuid),
      principals.findUser(unknown),
      principals.findAdmin(admin.uuid),
    ]);
    expect(a1?.uuid).toBe(a.userUuid);
    expect(a1?.company.uuid).toBe(a.companyUuid);
    expect(b1?.uuid).toBe(b.userUuid);
    expect(b1?.company.uuid).toBe(b.companyUuid);
    expect(a2).toEqual(a1);
    expect(a2).not.toBe(a1);
    expect(a2?.company).not.toBe(a1?.company);
    expect(none).toBeNull();
    expect(admin1?.uuid).toBe(admin.uuid);
    expect(admin1?.role.name).toBe('admin');
  });

  it('reads what is in the database when the lookup starts, not an earlier answer', async () => {
    const { userUuid } = await createActiveUser(t);
    const principals = t.app.get(PrincipalRepository);
    expect((await principals.findUser(userUuid))?.status).toBe('active');
    await t.dataSource.getRepository(User).update({ uuid: userUuid }, { status: 'suspended' });
    expect((await principals.findUser(userUuid))?.status).toBe('suspended');
  });
});
