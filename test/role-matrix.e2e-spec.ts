import { ADMIN_ROLE_NAMES, AdminRoleName } from '../src/modules/admins/entities/admin-role.entity';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { ApiKey } from '../src/modules/api-keys/entities/api-key.entity';
import { newApiKey } from '../src/modules/auth/api-key-secret';
import { Billing, BillingStatus } from '../src/modules/billings/entities/billing.entity';
import { Company } from '../src/modules/companies/entities/company.entity';
import { Notification } from '../src/modules/notifications/entities/notification.entity';
import { Package } from '../src/modules/packages/entities/package.entity';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { Domain } from '../src/modules/domains/entities/domain.entity';
import { SuppressionEntry } from '../src/modules/suppression/entities/suppression-entry.entity';
import { User } from '../src/modules/users/entities/user.entity';
import { createPackage, insertBilling, pngBytes } from './support/billing-fixtures';
import {
  bearer,
  createActiveUser,
  createAdmin,
  CreatedAdmin,
  expectFailure,
  PASSWORD,
  registerUser,
  uniqueEmail,
} from './support/factories';
import { CrmServer } from './support/crm-server';
import { createTestApp, TestApp } from './support/test-app';

/** Admin-only routes outside /api/v1/admins that the matrix covers too. */
const ADMIN_ROUTES_ELSEWHERE = ['GET /api/v1/auth-crm'];

/**
 * The admin role matrix of auth.md, one entry per route. An area that adds admin routes
 * appends its entries here (and, when its paths need ids, the fixtures it needs in
 * `createFixtures`); the coverage test at the bottom fails while an admin route of the router
 * has no entry.
 */
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What each caller changes on its own (a billing can be approved once, a notification deleted once). */
interface PerCaller {
  notificationUuid: string;
  otherNotificationUuid: string;
  packageToDeleteUuid: string;
  billingToApproveUuid: string;
  billingToRejectUuid: string;
  billingToRefundUuid: string;
  suppressionToDeleteUuid: string;
  domainToVerifyUuid: string;
  domainToDeleteUuid: string;
  apiKeyToRevokeUuid: string;
}

interface Fixtures {
  /** An admin (role `admin`) that the routes on `/admins/:uuid` read and update. */
  adminUuid: string;
  companyUuid: string;
  /** An active user of that company. */
  userUuid: string;
  /** A registered user who has not verified the e-mail yet (resend-verification). */
  pendingUserUuid: string;
  packageUuid: string;
  /** A billing awaiting review, with an uploaded proof. */
  billingUuid: string;
  perCaller: Record<AdminRoleName, PerCaller>;
}

interface MatrixEntry {
  /** The row of the matrix in auth.md. */
  row: string;
  method: Method;
  /** The route as the router declares it (`:uuid` …), for the coverage check. */
  route: string;
  /** The concrete path called, for the calling admin's role. */
  path: (f: Fixtures, role: AdminRoleName) => string;
  /** A valid body, built per call (so a create never collides with an earlier one). */
  body?: (f: Fixtures) => object;
  /** The success status of an allowed call. */
  status: number;
  /** The route answers a file, not the envelope (README.md, "Exceptions"). */
  raw?: boolean;
  allowed: readonly AdminRoleName[];
  /** For writes: checks the database after an allowed call (`data` is the response's). */
  written?: (
    t: TestApp,
    ctx: { f: Fixtures; caller: CreatedAdmin; data: Record<string, unknown> },
  ) => Promise<void>;
}

const adminRow = (t: TestApp, uuid: string) =>
  t.dataSource.getRepository(Admin).findOneOrFail({ where: { uuid } });

const ALL: readonly AdminRoleName[] = ADMIN_ROLE_NAMES;
const SUPER: readonly AdminRoleName[] = ['superAdmin'];

const STAFF: readonly AdminRoleName[] = ['superAdmin', 'admin'];
const MONEY: readonly AdminRoleName[] = ['superAdmin', 'accounting'];

const OWN_PROFILE = 'own profile, password, notifications';
const ADMINS = 'admins and roles';
const COMPANIES_READ = 'companies read';
const COMPANIES_WRITE = 'companies write';
const USERS = 'users';
const PACKAGES_READ = 'packages read';
const PACKAGES_WRITE = 'packages write';
const BILLINGS_READ = 'billings read';
const BILLINGS_WRITE = 'billings approve, reject, refund';
const REVENUE = 'reports revenue';
const DELIVERY_REPORTS = 'reports (`/admins/reports`) delivery';
const SUPPRESSION = 'suppression';
const DOMAINS = 'domains';
const CRM_OAUTH = 'CRM OAuth (`/auth-crm`, `/get-token`), test job (`/t3st-job`)';

const billingStatus = async (t: TestApp, uuid: string) =>
  (await t.dataSource.getRepository(Billing).findOneByOrFail({ uuid })).status;

const MATRIX: MatrixEntry[] = [
  {
    row: OWN_PROFILE,
    method: 'get',
    route: '/api/v1/admins/me',
    path: () => '/api/v1/admins/me',
    status: 200,
    allowed: ALL,
  },
  {
    row: OWN_PROFILE,
    method: 'patch',
    route: '/api/v1/admins/me',
    path: () => '/api/v1/admins/me',
    body: () => ({ fullName: 'Matrix Caller' }),
    status: 200,
    allowed: ALL,
    written: async (t, { caller }) => expect((await adminRow(t, caller.uuid)).fullName).toBe('Matrix Caller'),
  },
  {
    row: OWN_PROFILE,
    method: 'put',
    route: '/api/v1/admins/me/password',
    path: () => '/api/v1/admins/me/password',
    // The same password again: a real change (the version moves on) that keeps the caller's login.
    body: () => ({ currentPassword: PASSWORD, newPassword: PASSWORD }),
    status: 200,
    allowed: ALL,
    written: async (t, { caller }) => expect((await adminRow(t, caller.uuid)).passwordVersion).toBe(1),
  },
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins',
    path: () => '/api/v1/admins',
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'post',
    route: '/api/v1/admins',
    path: () => '/api/v1/admins',
    body: () => ({
      email: uniqueEmail('matrix'),
      fullName: 'Made By Matrix',
      password: PASSWORD,
      roleName: 'admin',
    }),
    status: 201,
    allowed: SUPER,
    written: async (t, { data }) =>
      expect(await adminRow(t, data.uuid as string)).toMatchObject({ fullName: 'Made By Matrix', roleId: 2 }),
  },
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins/roles',
    path: () => '/api/v1/admins/roles',
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'get',
    route: '/api/v1/admins/:uuid',
    path: (f) => `/api/v1/admins/${f.adminUuid}`,
    status: 200,
    allowed: SUPER,
  },
  {
    row: ADMINS,
    method: 'patch',
    route: '/api/v1/admins/:uuid',
    path: (f) => `/api/v1/admins/${f.adminUuid}`,
    body: () => ({ fullName: 'Renamed By Matrix' }),
    status: 200,
    allowed: SUPER,
    written: async (t, { f }) => expect((await adminRow(t, f.adminUuid)).fullName).toBe('Renamed By Matrix'),
  },
  // Own notifications: every role reads and manages its own.
  {
    row: OWN_PROFILE,
    method: 'get',
    route: '/api/v1/admins/notification',
    path: () => '/api/v1/admins/notification',
    status: 200,
    allowed: ALL,
  },
  {
    row: OWN_PROFILE,
    method: 'get',
    route: '/api/v1/admins/notification/unread-count',
    path: () => '/api/v1/admins/notification/unread-count',
    status: 200,
    allowed: ALL,
  },
  {
    row: OWN_PROFILE,
    method: 'patch',
    route: '/api/v1/admins/notification/:uuid/read',
    path: (f, role) => `/api/v1/admins/notification/${f.perCaller[role].notificationUuid}/read`,
    status: 200,
    allowed: ALL,
    written: async (t, { data }) =>
      expect(
        (await t.dataSource.getRepository(Notification).findOneByOrFail({ uuid: data.uuid as string }))
          .readAt,
      ).not.toBeNull(),
  },
  {
    row: OWN_PROFILE,
    method: 'patch',
    route: '/api/v1/admins/notification/read-all',
    path: () => '/api/v1/admins/notification/read-all',
    status: 200,
    allowed: ALL,
  },
  {
    row: OWN_PROFILE,
    method: 'delete',
    route: '/api/v1/admins/notification/:uuid',
    path: (f, role) => `/api/v1/admins/notification/${f.perCaller[role].otherNotificationUuid}`,
    status: 200,
    allowed: ALL,
    written: async (t, { f, caller }) => {
      const role = caller.role;
      const gone = await t.dataSource
        .getRepository(Notification)
        .findOneBy({ uuid: f.perCaller[role].otherNotificationUuid });
      expect(gone).toBeNull();
    },
  },
  {
    row: 'broadcast notifications to users',
    method: 'post',
    route: '/api/v1/admins/notification/broadcast',
    path: () => '/api/v1/admins/notification/broadcast',
    body: () => ({ title: 'Matrix', body: 'Matrix broadcast' }),
    status: 201,
    allowed: ['superAdmin', 'admin'],
    written: async (t, { data }) =>
      expect(
        await t.dataSource.getRepository(Notification).countBy({ type: 'broadcast', title: 'Matrix' }),
      ).toBeGreaterThanOrEqual(data.recipients as number),
  },
  // Companies.
  {
    row: COMPANIES_READ,
    method: 'get',
    route: '/api/v1/admins/companies',
    path: () => '/api/v1/admins/companies',
    status: 200,
    allowed: ALL,
  },
  {
    row: COMPANIES_READ,
    method: 'get',
    route: '/api/v1/admins/companies/:uuid',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}`,
    status: 200,
    allowed: ALL,
  },
  {
    row: COMPANIES_WRITE,
    method: 'patch',
    route: '/api/v1/admins/companies/:uuid',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}`,
    body: () => ({ quota: 4321 }),
    status: 200,
    allowed: STAFF,
    written: async (t, { f }) =>
      expect((await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: f.companyUuid })).quota).toBe(
        4321,
      ),
  },
  {
    row: COMPANIES_WRITE,
    method: 'post',
    route: '/api/v1/admins/companies/:uuid/script-token',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}/script-token`,
    status: 200,
    allowed: STAFF,
  },
  {
    row: COMPANIES_WRITE,
    method: 'post',
    route: '/api/v1/admins/companies/:uuid/relay-password',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}/relay-password`,
    status: 200,
    allowed: STAFF,
  },
  {
    row: COMPANIES_WRITE,
    method: 'post',
    route: '/api/v1/admins/companies/:uuid/crm-sync',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}/crm-sync`,
    status: 200,
    written: async (t, { f, data }) =>
      expect(
        (await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: f.companyUuid })).crmAccountId,
      ).toBe(data.crmAccountId),
    allowed: STAFF,
  },
  {
    row: CRM_OAUTH,
    method: 'get',
    route: '/api/v1/auth-crm',
    path: () => '/api/v1/auth-crm',
    status: 200,
    allowed: ['superAdmin'],
  },
  // Users (accounting reads only).
  {
    row: USERS,
    method: 'get',
    route: '/api/v1/admins/users',
    path: () => '/api/v1/admins/users',
    status: 200,
    allowed: ALL,
  },
  {
    row: USERS,
    method: 'get',
    route: '/api/v1/admins/users/:uuid',
    path: (f) => `/api/v1/admins/users/${f.userUuid}`,
    status: 200,
    allowed: ALL,
  },
  {
    row: USERS,
    method: 'patch',
    route: '/api/v1/admins/users/:uuid',
    path: (f) => `/api/v1/admins/users/${f.userUuid}`,
    body: () => ({ status: 'active' }),
    status: 200,
    allowed: STAFF,
  },
  {
    row: USERS,
    method: 'post',
    route: '/api/v1/admins/users/:uuid/resend-verification',
    path: (f) => `/api/v1/admins/users/${f.pendingUserUuid}/resend-verification`,
    status: 200,
    allowed: STAFF,
  },
  // Packages (admin reads only).
  {
    row: PACKAGES_READ,
    method: 'get',
    route: '/api/v1/admins/packages',
    path: () => '/api/v1/admins/packages',
    status: 200,
    allowed: ALL,
  },
  {
    row: PACKAGES_READ,
    method: 'get',
    route: '/api/v1/admins/packages/:uuid',
    path: (f) => `/api/v1/admins/packages/${f.packageUuid}`,
    status: 200,
    allowed: ALL,
  },
  {
    row: PACKAGES_WRITE,
    method: 'post',
    route: '/api/v1/admins/packages',
    path: () => '/api/v1/admins/packages',
    body: () => ({
      name: `Matrix ${uniqueEmail('p')}`.slice(0, 60),
      quota: 100,
      price: 1000,
      currency: 'IDR',
    }),
    status: 201,
    allowed: MONEY,
    written: async (t, { data }) =>
      expect(
        await t.dataSource.getRepository(Package).findOneBy({ uuid: data.uuid as string }),
      ).not.toBeNull(),
  },
  {
    row: PACKAGES_WRITE,
    method: 'patch',
    route: '/api/v1/admins/packages/:uuid',
    path: (f) => `/api/v1/admins/packages/${f.packageUuid}`,
    body: () => ({ description: 'Edited by the matrix' }),
    status: 200,
    allowed: MONEY,
    written: async (t, { f }) =>
      expect(
        (await t.dataSource.getRepository(Package).findOneByOrFail({ uuid: f.packageUuid })).description,
      ).toBe('Edited by the matrix'),
  },
  {
    row: PACKAGES_WRITE,
    method: 'delete',
    route: '/api/v1/admins/packages/:uuid',
    path: (f, role) => `/api/v1/admins/packages/${f.perCaller[role].packageToDeleteUuid}`,
    status: 200,
    allowed: MONEY,
  },
  // Billings: everyone reads; only superAdmin and accounting move money.
  {
    row: BILLINGS_READ,
    method: 'get',
    route: '/api/v1/admins/billings',
    path: () => '/api/v1/admins/billings',
    status: 200,
    allowed: ALL,
  },
  {
    row: BILLINGS_READ,
    method: 'get',
    route: '/api/v1/admins/billings/:uuid',
    path: (f) => `/api/v1/admins/billings/${f.billingUuid}`,
    status: 200,
    allowed: ALL,
  },
  {
    row: BILLINGS_READ,
    method: 'get',
    route: '/api/v1/admins/billings/:uuid/proof',
    path: (f) => `/api/v1/admins/billings/${f.billingUuid}/proof`,
    status: 200,
    allowed: ALL,
    raw: true,
  },
  {
    row: REVENUE,
    method: 'get',
    route: '/api/v1/admins/billings/summary',
    path: () => '/api/v1/admins/billings/summary?from=2026-01-01&to=2026-12-31',
    status: 200,
    allowed: MONEY,
  },
  ...(['summary', 'logs', 'companies', 'providers', 'bounce-categories'] as const).map(
    (report): MatrixEntry => ({
      row: DELIVERY_REPORTS,
      method: 'get',
      route: `/api/v1/admins/reports/${report}`,
      path: () => `/api/v1/admins/reports/${report}?from=2026-01-01&to=2026-12-31`,
      status: 200,
      allowed: ALL,
    }),
  ),
  {
    row: DELIVERY_REPORTS,
    method: 'get',
    route: '/api/v1/admins/reports/alerts',
    path: () => '/api/v1/admins/reports/alerts?state=open',
    status: 200,
    allowed: ALL,
  },
  {
    row: REVENUE,
    method: 'get',
    route: '/api/v1/admins/reports/revenue',
    path: () => '/api/v1/admins/reports/revenue?from=2026-01-01&to=2026-12-31',
    status: 200,
    allowed: MONEY,
  },
  {
    row: BILLINGS_WRITE,
    method: 'post',
    route: '/api/v1/admins/billings/:uuid/approve',
    path: (f, role) => `/api/v1/admins/billings/${f.perCaller[role].billingToApproveUuid}/approve`,
    body: () => ({ note: 'matrix' }),
    status: 200,
    allowed: MONEY,
    written: async (t, { data }) => expect(await billingStatus(t, data.uuid as string)).toBe('paid'),
  },
  {
    row: BILLINGS_WRITE,
    method: 'post',
    route: '/api/v1/admins/billings/:uuid/reject',
    path: (f, role) => `/api/v1/admins/billings/${f.perCaller[role].billingToRejectUuid}/reject`,
    body: () => ({ reason: 'Blurry transfer receipt' }),
    status: 200,
    allowed: MONEY,
    written: async (t, { data }) => expect(await billingStatus(t, data.uuid as string)).toBe('pending'),
  },
  {
    row: BILLINGS_WRITE,
    method: 'post',
    route: '/api/v1/admins/billings/:uuid/refund',
    path: (f, role) => `/api/v1/admins/billings/${f.perCaller[role].billingToRefundUuid}/refund`,
    body: () => ({ reason: 'Customer asked' }),
    status: 200,
    allowed: MONEY,
    written: async (t, { data }) => expect(await billingStatus(t, data.uuid as string)).toBe('refunded'),
  },
  // Suppression.
  {
    row: SUPPRESSION,
    method: 'get',
    route: '/api/v1/admins/suppression',
    path: () => '/api/v1/admins/suppression?companyUuid=global',
    status: 200,
    allowed: STAFF,
  },
  {
    row: SUPPRESSION,
    method: 'post',
    route: '/api/v1/admins/suppression',
    path: () => '/api/v1/admins/suppression',
    body: () => ({ emails: [uniqueEmail('suppressed')], reason: 'manual' }),
    status: 201,
    allowed: STAFF,
    written: async (t, { data }) => {
      expect(data).toEqual({ added: 1, existing: 0, invalid: [] });
      const [newest] = await t.dataSource
        .getRepository(SuppressionEntry)
        .find({ order: { id: 'DESC' }, take: 1 });
      expect(newest).toMatchObject({ companyId: null, reason: 'manual', source: 'admin' });
    },
  },
  {
    row: SUPPRESSION,
    method: 'delete',
    route: '/api/v1/admins/suppression/:uuid',
    path: (f, role) => `/api/v1/admins/suppression/${f.perCaller[role].suppressionToDeleteUuid}`,
    status: 200,
    allowed: STAFF,
    written: async (t, { f, caller }) =>
      expect(
        await t.dataSource
          .getRepository(SuppressionEntry)
          .findOneBy({ uuid: f.perCaller[caller.role].suppressionToDeleteUuid }),
      ).toBeNull(),
  },
  // Domains.
  {
    row: DOMAINS,
    method: 'get',
    route: '/api/v1/admins/domains',
    path: () => '/api/v1/admins/domains',
    status: 200,
    allowed: STAFF,
  },
  {
    row: DOMAINS,
    method: 'get',
    route: '/api/v1/admins/domains/:uuid',
    path: (f, role) => `/api/v1/admins/domains/${f.perCaller[role].domainToVerifyUuid}`,
    status: 200,
    allowed: STAFF,
  },
  {
    row: DOMAINS,
    method: 'post',
    route: '/api/v1/admins/domains/:uuid/verify',
    path: (f, role) => `/api/v1/admins/domains/${f.perCaller[role].domainToVerifyUuid}/verify`,
    status: 200,
    allowed: STAFF,
    written: async (t, { f, caller }) =>
      expect(
        (
          await t.dataSource
            .getRepository(Domain)
            .findOneByOrFail({ uuid: f.perCaller[caller.role].domainToVerifyUuid })
        ).lastCheckedAt,
      ).toBeInstanceOf(Date),
  },
  {
    row: DOMAINS,
    method: 'delete',
    route: '/api/v1/admins/domains/:uuid',
    path: (f, role) => `/api/v1/admins/domains/${f.perCaller[role].domainToDeleteUuid}`,
    status: 200,
    allowed: STAFF,
    written: async (t, { f, caller }) =>
      expect(
        await t.dataSource
          .getRepository(Domain)
          .findOneBy({ uuid: f.perCaller[caller.role].domainToDeleteUuid }),
      ).toBeNull(),
  },
  // API keys (platform.md): read like the company, revoked like a company write.
  {
    row: COMPANIES_READ,
    method: 'get',
    route: '/api/v1/admins/companies/:uuid/api-keys',
    path: (f) => `/api/v1/admins/companies/${f.companyUuid}/api-keys`,
    status: 200,
    allowed: ALL,
  },
  {
    row: COMPANIES_WRITE,
    method: 'delete',
    route: '/api/v1/admins/companies/:uuid/api-keys/:keyUuid',
    path: (f, role) =>
      `/api/v1/admins/companies/${f.companyUuid}/api-keys/${f.perCaller[role].apiKeyToRevokeUuid}`,
    status: 200,
    allowed: STAFF,
    written: async (t, { f, caller }) =>
      expect(
        (
          await t.dataSource
            .getRepository(ApiKey)
            .findOneByOrFail({ uuid: f.perCaller[caller.role].apiKeyToRevokeUuid })
        ).revokedAt,
      ).toBeInstanceOf(Date),
  },
];

/** Admin-area routes open to anyone (auth.md: login; endpoints.md: forgot / reset password). */
const PUBLIC_ADMIN_ROUTES = [
  'POST /api/v1/admins/login',
  'POST /api/v1/admins/forgot-password',
  'POST /api/v1/admins/reset-password',
];

async function createFixtures(t: TestApp, callers: Record<AdminRoleName, CreatedAdmin>): Promise<Fixtures> {
  const target = await createAdmin(t, 'admin');
  const owner = await createActiveUser(t);
  const pending = await registerUser(t);
  const company = await t.dataSource.getRepository(Company).findOneByOrFail({ uuid: owner.companyUuid });
  const pkg = await createPackage(t);
  const proof = () => ({
    proofContent: pngBytes(),
    proofFileName: 'proof.png',
    proofFileType: 'image/png',
    proofFileSize: pngBytes().length,
    proofUploadedAt: new Date(),
  });
  const billing = async (status: BillingStatus, withProof = false) => {
    const paid = status === 'paid' ? { paidAt: new Date(), paidAmount: pkg.price } : {};
    const saved = await insertBilling(t, company.id, pkg, {
      method: 'manual',
      status,
      ...paid,
      ...(withProof ? proof() : {}),
    });
    return saved.uuid;
  };
  const notification = async (adminUuid: string) => {
    const admin = await adminRow(t, adminUuid);
    const repo = t.dataSource.getRepository(Notification);
    return (
      await repo.save(
        repo.create({
          adminId: admin.id,
          type: 'company.registered',
          title: 'Matrix',
          body: 'For the matrix',
        }),
      )
    ).uuid;
  };
  /** A pending domain with no records to check (its verify asks DNS nothing). */
  const domain = async (label: string) =>
    (
      await t.dataSource.getRepository(Domain).save(
        t.dataSource.getRepository(Domain).create({
          companyId: company.id,
          name: `${label.toLowerCase()}.matrix.example`,
          verificationToken: 'token',
          dkimSelector: 'rs202611',
          dkimPublicKey: 'key',
          dkimPrivateKey: 'sealed',
          records: [],
        }),
      )
    ).uuid;
  const perCaller = {} as Record<AdminRoleName, PerCaller>;
  for (const role of ADMIN_ROLE_NAMES) {
    perCaller[role] = {
      notificationUuid: await notification(callers[role].uuid),
      otherNotificationUuid: await notification(callers[role].uuid),
      packageToDeleteUuid: (await createPackage(t)).uuid,
      billingToApproveUuid: await billing('awaiting_review', true),
      billingToRejectUuid: await billing('awaiting_review', true),
      billingToRefundUuid: await billing('paid'),
      suppressionToDeleteUuid: (
        await t.dataSource.getRepository(SuppressionEntry).save(
          t.dataSource.getRepository(SuppressionEntry).create({
            companyId: null,
            email: uniqueEmail(`delete-${role}`),
            reason: 'manual',
            source: 'admin',
          }),
        )
      ).uuid,
      domainToVerifyUuid: await domain(`verify-${role}`),
      domainToDeleteUuid: await domain(`delete-${role}`),
      apiKeyToRevokeUuid: (
        await t.dataSource.getRepository(ApiKey).save(
          t.dataSource.getRepository(ApiKey).create({
            companyId: company.id,
            name: `revoke-${role}`,
            scope: 'read',
            digest: newApiKey().digest,
            hint: 'rk_matrix123',
          }),
        )
      ).uuid,
    };
  }
  return {
    adminUuid: target.uuid,
    companyUuid: owner.companyUuid,
    userUuid: owner.userUuid,
    pendingUserUuid: pending.userUuid,
    packageUuid: pkg.uuid,
    billingUuid: await billing('awaiting_review', true),
    perCaller,
  };
}

/** Everything a refused request must leave as it was (areas with their own tables add them here). */
async function snapshot(t: TestApp): Promise<unknown> {
  const admins = await t.dataSource
    .getRepository(Admin)
    .createQueryBuilder('admin')
    .addSelect('admin.passwordHash')
    .orderBy('admin.id')
    .getMany();
  const companies = await t.dataSource
    .getRepository(Company)
    .createQueryBuilder('company')
    .addSelect(['company.relayPasswordHash', 'company.scriptTokenHash'])
    .orderBy('company.id')
    .getMany();
  const order = { order: { id: 'ASC' as const } };
  return {
    admins,
    companies,
    users: await t.dataSource.getRepository(User).find(order),
    packages: await t.dataSource.getRepository(Package).find(order),
    billings: await t.dataSource.getRepository(Billing).find(order),
    notifications: await t.dataSource.getRepository(Notification).find(order),
    suppression: await t.dataSource.getRepository(SuppressionEntry).find(order),
    domains: await t.dataSource.getRepository(Domain).find(order),
    apiKeys: await t.dataSource.getRepository(ApiKey).find(order),
    cleanLogs: await t.dataSource.getRepository(CleanLog).find({ order: { id: 'ASC' } }),
  };
}

const key = (e: MatrixEntry) => `${e.method.toUpperCase()} ${e.route}`;

describe('Admin role matrix (auth.md)', () => {
  let t: TestApp;
  let fixtures: Fixtures;
  const callers = {} as Record<AdminRoleName, CreatedAdmin>;
  let userToken: string;

  let crm: CrmServer;

  beforeAll(async () => {
    crm = new CrmServer('matrix-crm-client', 'matrix-crm-secret');
    await crm.start();
    t = await createTestApp({
      env: { CRM_ACCOUNTS_URL: crm.url, CRM_CLIENT_ID: crm.clientId, CRM_CLIENT_SECRET: crm.clientSecret },
    });
    for (const role of ADMIN_ROLE_NAMES) callers[role] = await createAdmin(t, role);
    // The CRM connected, so crm-sync can succeed for the roles allowed it.
    const auth = await t
      .http()
      .get('/api/v1/auth-crm')
      .set(...bearer(callers.superAdmin.accessToken))
      .expect(200);
    const state = new URL(auth.body.data.authorizationUrl).searchParams.get('state')!;
    await t.http().get('/api/v1/get-token').query({ code: crm.issueCode(), state }).expect(200);
    fixtures = await createFixtures(t, callers);
    userToken = (await createActiveUser(t)).accessToken;
  });
  afterAll(async () => {
    await t.close();
    await crm.stop();
  });

  function call(entry: MatrixEntry, token?: string, role: AdminRoleName = 'superAdmin') {
    let req = t.http()[entry.method](entry.path(fixtures, role));
    if (token) req = req.set(...bearer(token));
    return entry.body ? req.send(entry.body(fixtures)) : req;
  }

  const cells = MATRIX.flatMap((entry) =>
    ADMIN_ROLE_NAMES.map((role) => ({ entry, role, allowed: entry.allowed.includes(role) })),
  );

  it.each(
    cells.map((c) => [c.entry.row, key(c.entry), c.role, c.allowed ? 'allowed' : 'refused', c] as const),
  )('%s: %s as %s is %s', async (_row, _key, role, _verdict, { entry, allowed }) => {
    const before = await snapshot(t);
    const res = await call(entry, callers[role].accessToken, role);
    if (allowed && entry.raw) {
      expect(res.status).toBe(entry.status);
      expect(res.headers['content-disposition']).toMatch(/^attachment/);
    } else if (allowed) {
      expect(res.status).toBe(entry.status);
      expect(res.body).toMatchObject({ status: 'success', code: entry.status });
      expect(typeof res.body.data).toBe('object');
      expect(res.body.data).not.toBeNull();
      await entry.written?.(t, { f: fixtures, caller: callers[role], data: res.body.data });
    } else {
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'Your role does not allow this');
      expect(await snapshot(t)).toEqual(before);
    }
  });

  it.each(MATRIX.map((e) => [key(e), e] as const))(
    '%s with a user access token is 403',
    async (_key, entry) => {
      const before = await snapshot(t);
      const res = await call(entry, userToken);
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'This route is for admins only');
      expect(await snapshot(t)).toEqual(before);
    },
  );

  it.each(MATRIX.map((e) => [key(e), e] as const))('%s without a token is 401', async (_key, entry) => {
    const before = await snapshot(t);
    const res = await call(entry);
    expect(res.status).toBe(401);
    expectFailure(res.body, 401, 'Missing bearer token');
    expect(await snapshot(t)).toEqual(before);
  });

  it('covers every admin route of the router, and names no route that does not exist', () => {
    const registered = new Set(
      t.routes
        .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
        .filter(
          (r) =>
            r.url.startsWith('/api/v1/admins') || ADMIN_ROUTES_ELSEWHERE.includes(`${r.method} ${r.url}`),
        )
        .map((r) => `${r.method} ${r.url}`),
    );
    const inMatrix = new Set(MATRIX.map(key));
    expect(
      [...registered].filter((r) => !inMatrix.has(r) && !PUBLIC_ADMIN_ROUTES.includes(r)).sort(),
    ).toEqual([]);
    expect([...inMatrix].filter((r) => !registered.has(r)).sort()).toEqual([]);
    expect(PUBLIC_ADMIN_ROUTES.filter((r) => !registered.has(r))).toEqual([]);
  });
});
