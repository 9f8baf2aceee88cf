import * as jwt from 'jsonwebtoken';
import { Contact } from '../src/modules/users/entities/contact.entity';
import { User } from '../src/modules/users/entities/user.entity';
import {
  bearer,
  countAll,
  createActiveUser,
  expectFailure,
  LoggedIn,
  loginUser,
  RegisteredUser,
  uniqueEmail,
} from './support/factories';
import { tokenFromLink } from './support/smtp-sink';
import { createTestApp, TEST_SECRETS, TestApp } from './support/test-app';

const MEMBER_PASSWORD = 'member password 123';
const INVITE_SUBJECT = /invited/i;

describe('Company members: invite → e-mail → accept-invite → login, re-send, removal', () => {
  let t: TestApp;
  let owner: RegisteredUser & LoggedIn;
  let other: RegisteredUser & LoggedIn;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createActiveUser(t);
    other = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const usersPath = (companyUuid: string) => `/api/v1/companies/${companyUuid}/users`;
  const invite = (by: LoggedIn, companyUuid: string, body: object) =>
    t
      .http()
      .post(usersPath(companyUuid))
      .set(...bearer(by.accessToken))
      .send(body);
  const accept = (token: string, password = MEMBER_PASSWORD) =>
    t.http().post('/api/v1/users/accept-invite').send({ token, password });
  const userRow = (email: string) =>
    t.dataSource.getRepository(User).findOne({ where: { email }, relations: { contact: true } });
  const tables = () => countAll(t, ['users', 'contacts', 'companies', 'notifications']);

  /** Invites a new member through the API, accepts the invitation and logs in. */
  async function activeMember(companyOwner: RegisteredUser & LoggedIn) {
    const email = uniqueEmail('member');
    const created = await invite(companyOwner, companyOwner.companyUuid, { email, fullName: 'Mia Member' });
    expect(created.status).toBe(201);
    const mail = await t.smtp.waitFor(email, INVITE_SUBJECT);
    await accept(tokenFromLink(mail, '/accept-invite')).expect(200);
    return { email, uuid: created.body.data.uuid as string, ...(await loginUser(t, email, MEMBER_PASSWORD)) };
  }

  it('invites a member: 201 pending member with a contact, and an invitation e-mail with the accept link', async () => {
    const email = uniqueEmail('invitee');
    const before = await tables();
    const res = await invite(owner, owner.companyUuid, {
      email: `  ${email.toUpperCase()} `,
      fullName: 'Ivy Invitee',
    }).expect(201);
    expect(res.body).toMatchObject({
      status: 'success',
      code: 201,
      data: {
        email,
        status: 'pending',
        role: 'member',
        companyUuid: owner.companyUuid,
        emailVerifiedAt: null,
        contact: { fullName: 'Ivy Invitee', phone: null, position: null },
      },
    });
    expect(res.body.data).not.toHaveProperty('passwordHash');
    expect(await tables()).toEqual({ ...before, users: before.users + 1, contacts: before.contacts + 1 });

    const row = await t.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .addSelect('u.passwordHash')
      .innerJoinAndSelect('u.contact', 'contact')
      .innerJoinAndSelect('u.company', 'company')
      .where('u.email = :email', { email })
      .getOneOrFail();
    expect(row).toMatchObject({
      status: 'pending',
      companyRole: 'member',
      passwordHash: null,
      passwordVersion: 0,
      company: { uuid: owner.companyUuid },
      contact: { uuid: res.body.data.contact.uuid, fullName: 'Ivy Invitee' },
    });
    expect(row.contact.companyId).toBe(row.companyId);

    const mail = await t.smtp.waitFor(email, INVITE_SUBJECT);
    expect(mail.subject).toBe('You are invited to Acme Mail');
    expect(mail.text).toContain('http://app.test/accept-invite?token=');
    const claims = jwt.verify(
      tokenFromLink(mail, '/accept-invite'),
      TEST_SECRETS.JWT_VERIFICATION_SECRET,
    ) as {
      uuid: string;
      purpose: string;
      pwv: number;
      email: string;
    };
    expect(claims).toMatchObject({ uuid: row.uuid, purpose: 'invite', pwv: 0, email });

    // The invited member cannot log in before accepting.
    const early = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email, password: MEMBER_PASSWORD })
      .expect(401);
    expectFailure(early.body, 401, 'Invalid email or password');
  });

  it('accept-invite sets the password, activates and verifies the member, who can then log in', async () => {
    const email = uniqueEmail('accepter');
    const created = await invite(owner, owner.companyUuid, { email, fullName: 'Ace Accepter' }).expect(201);
    const token = tokenFromLink(await t.smtp.waitFor(email, INVITE_SUBJECT), '/accept-invite');

    const res = await accept(token).expect(200);
    expect(res.body).toMatchObject({
      status: 'success',
      code: 200,
      msg: 'Invitation accepted',
      data: {
        user: {
          uuid: created.body.data.uuid,
          email,
          status: 'active',
          role: 'member',
          companyUuid: owner.companyUuid,
          emailVerifiedAt: expect.any(String),
        },
      },
    });
    const row = await t.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .addSelect('u.passwordHash')
      .where('u.email = :email', { email })
      .getOneOrFail();
    expect(row.status).toBe('active');
    expect(row.emailVerifiedAt).not.toBeNull();
    expect(row.passwordVersion).toBe(1);
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);

    const login = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email, password: MEMBER_PASSWORD })
      .expect(200);
    expect(login.body.data).toMatchObject({
      user: { email, role: 'member', status: 'active' },
      company: { uuid: owner.companyUuid },
      contact: { fullName: 'Ace Accepter' },
    });

    // Used once: the same link is refused, and nothing changes.
    const again = await accept(token, 'another password 456').expect(401);
    expectFailure(again.body, 401, 'Invalid or expired invitation');
    await loginUser(t, email, MEMBER_PASSWORD);
  });

  it('a pending invited member who resets the password instead is verified and active, and can log in', async () => {
    const email = uniqueEmail('resetter');
    const created = await invite(owner, owner.companyUuid, { email, fullName: 'Rae Resetter' }).expect(201);
    const invitation = tokenFromLink(await t.smtp.waitFor(email, INVITE_SUBJECT), '/accept-invite');

    await t.http().post('/api/v1/users/forgot-password').send({ email }).expect(200);
    const reset = tokenFromLink(await t.smtp.waitFor(email, /reset/i), '/reset-password');
    await t
      .http()
      .post('/api/v1/users/reset-password')
      .send({ token: reset, password: MEMBER_PASSWORD })
      .expect(200);

    const row = await userRow(email);
    expect(row).toMatchObject({ status: 'active', passwordVersion: 1 });
    expect(row!.emailVerifiedAt).toBeInstanceOf(Date);

    const login = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email, password: MEMBER_PASSWORD })
      .expect(200);
    expect(login.body.data.user).toMatchObject({
      uuid: created.body.data.uuid,
      status: 'active',
      role: 'member',
    });
    const me = await t
      .http()
      .get('/api/v1/users/me')
      .set(...bearer(login.body.data.accessToken))
      .expect(200);
    expect(me.body.data.user).toMatchObject({
      uuid: created.body.data.uuid,
      email,
      status: 'active',
      emailVerifiedAt: expect.any(String),
    });

    // The password is set: the invitation is used up, and inviting the e-mail again is a 409.
    expectFailure((await accept(invitation).expect(401)).body, 401, 'Invalid or expired invitation');
    const again = await invite(owner, owner.companyUuid, { email, fullName: 'Rae Resetter' }).expect(409);
    expectFailure(again.body, 409, 'This user is already a member of the company');
  });

  it('a completed reset never lifts a suspension', async () => {
    const email = uniqueEmail('suspended');
    await invite(owner, owner.companyUuid, { email, fullName: 'Sue Suspended' }).expect(201);
    await t.dataSource.getRepository(User).update({ email }, { status: 'suspended' });
    await t.http().post('/api/v1/users/forgot-password').send({ email }).expect(200);
    const reset = tokenFromLink(await t.smtp.waitFor(email, /reset/i), '/reset-password');
    await t
      .http()
      .post('/api/v1/users/reset-password')
      .send({ token: reset, password: MEMBER_PASSWORD })
      .expect(200);
    expect(await userRow(email)).toMatchObject({
      status: 'suspended',
      emailVerifiedAt: null,
      passwordVersion: 1,
    });
    const login = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email, password: MEMBER_PASSWORD })
      .expect(403);
    expectFailure(login.body, 403, 'User account is suspended');
  });

  it('posting the same e-mail again re-sends the invitation (200); either link works once and ends both', async () => {
    const email = uniqueEmail('resend');
    const first = await invite(owner, owner.companyUuid, { email, fullName: 'Rae Resend' }).expect(201);
    const firstToken = tokenFromLink(await t.smtp.waitFor(email, INVITE_SUBJECT), '/accept-invite');

    const before = await tables();
    const second = await invite(owner, owner.companyUuid, { email, fullName: 'Another Name' }).expect(200);
    expect(second.body).toMatchObject({
      status: 'success',
      code: 200,
      data: { uuid: first.body.data.uuid, status: 'pending', contact: { fullName: 'Rae Resend' } },
    });
    expect(await tables()).toEqual(before);
    const secondToken = tokenFromLink(await t.smtp.waitFor(email, INVITE_SUBJECT, 2), '/accept-invite');
    expect(t.smtp.count(email, INVITE_SUBJECT)).toBe(2);

    // The re-sent invitation did not end the first one; using the first ends both.
    await accept(firstToken).expect(200);
    const late = await accept(secondToken, 'a different password').expect(401);
    expectFailure(late.body, 401, 'Invalid or expired invitation');
    await loginUser(t, email, MEMBER_PASSWORD);

    // Once accepted, inviting the address again is a conflict, not a new invitation.
    const accepted = await invite(owner, owner.companyUuid, { email, fullName: 'Rae' }).expect(409);
    expectFailure(accepted.body, 409, 'This user is already a member of the company');
    expect(t.smtp.count(email, INVITE_SUBJECT)).toBe(2);
  });

  it("refuses (409) an e-mail that belongs to another company's user, and writes nothing", async () => {
    const before = await tables();
    const res = await invite(owner, owner.companyUuid, { email: other.email, fullName: 'Poacher' }).expect(
      409,
    );
    expectFailure(res.body, 409, 'This e-mail address belongs to a user of another company');
    expect(await tables()).toEqual(before);
    const row = await userRow(other.email);
    expect(row).toMatchObject({ companyRole: 'owner', status: 'active' });
  });

  it('refuses bad invitation bodies with 400 and writes nothing', async () => {
    const before = await tables();
    const mailsBefore = t.smtp.mails.length;
    for (const body of [
      {},
      { email: 'not-an-email', fullName: 'X' },
      { email: uniqueEmail(), fullName: '' },
      { email: uniqueEmail(), fullName: '   ' },
      { email: uniqueEmail(), fullName: 'x'.repeat(201) },
      { email: uniqueEmail() },
      { email: uniqueEmail(), fullName: 'X', role: 'owner' },
      { email: 42, fullName: 'X' },
    ]) {
      const res = await invite(owner, owner.companyUuid, body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expectFailure(res.body, 400, 'Validation failed');
    }
    expect(await tables()).toEqual(before);
    expect(t.smtp.mails.length).toBe(mailsBefore);
  });

  it('refuses bad, forged, expired and wrong-purpose tokens with 401 (bad bodies with 400), changing nothing', async () => {
    const email = uniqueEmail('tokens');
    const created = await invite(owner, owner.companyUuid, { email, fullName: 'Tia Tokens' }).expect(201);
    const uuid = created.body.data.uuid as string;
    const sign = (payload: object, secret = TEST_SECRETS.JWT_VERIFICATION_SECRET, expiresIn = 3600) =>
      jwt.sign(payload, secret, { algorithm: 'HS256', expiresIn });

    const refused = [
      'not-a-jwt',
      sign({ uuid, email, purpose: 'verify-email' }),
      sign({ uuid, email, purpose: 'invite' }),
      sign({ uuid, email, purpose: 'invite', pwv: 1 }),
      sign({ uuid, email: 'someone@else.test', purpose: 'invite', pwv: 0 }),
      sign({ uuid, email, purpose: 'invite', pwv: 0 }, TEST_SECRETS.JWT_RESET_SECRET),
      sign({ uuid, email, purpose: 'invite', pwv: 0 }, TEST_SECRETS.JWT_VERIFICATION_SECRET, -60),
    ];
    for (const token of refused) {
      const res = await accept(token);
      expect(res.status).toBe(401);
      expectFailure(res.body, 401, /Invalid or expired/);
    }
    for (const body of [
      {},
      { token: sign({ uuid, email, purpose: 'invite', pwv: 0 }) },
      { token: sign({ uuid, email, purpose: 'invite', pwv: 0 }), password: 'short' },
      { token: sign({ uuid, email, purpose: 'invite', pwv: 0 }), password: MEMBER_PASSWORD, extra: 1 },
      { token: '', password: MEMBER_PASSWORD },
    ]) {
      const res = await t.http().post('/api/v1/users/accept-invite').send(body).expect(400);
      expectFailure(res.body, 400);
    }
    const row = await userRow(email);
    expect(row).toMatchObject({ status: 'pending', passwordVersion: 0, emailVerifiedAt: null });

    // A correctly signed invitation of the right version still works after all that.
    await accept(sign({ uuid, email, purpose: 'invite', pwv: 0 })).expect(200);
  });

  it('lists the members to any user of the company; only owners invite or remove', async () => {
    const member = await activeMember(owner);
    const list = await t
      .http()
      .get(usersPath(owner.companyUuid))
      .set(...bearer(member.accessToken))
      .expect(200);
    expect(list.body.data.meta).toMatchObject({ page: 1, limit: 20 });
    const emails = (list.body.data.items as Array<{ email: string; role: string }>).map((u) => u.email);
    expect(emails[0]).toBe(owner.email);
    expect(emails).toContain(member.email);
    expect(list.body.data.items[0]).toMatchObject({ role: 'owner', contact: { fullName: 'Ada Owner' } });

    const paged = await t
      .http()
      .get(`${usersPath(owner.companyUuid)}?page=2&limit=1`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(paged.body.data.items).toHaveLength(1);
    expect(paged.body.data.meta.totalItems).toBe(list.body.data.meta.totalItems);
    for (const q of ['page=0', 'limit=101', 'limit=abc', 'unknown=1']) {
      const res = await t
        .http()
        .get(`${usersPath(owner.companyUuid)}?${q}`)
        .set(...bearer(owner.accessToken));
      expect([q, res.status]).toEqual([q, 400]);
    }

    const before = await tables();
    const byMember = await invite(member, owner.companyUuid, { email: uniqueEmail(), fullName: 'X' }).expect(
      403,
    );
    expectFailure(byMember.body, 403, 'Only the company owner may do this');
    const removeByMember = await t
      .http()
      .delete(`${usersPath(owner.companyUuid)}/${owner.userUuid}`)
      .set(...bearer(member.accessToken))
      .expect(403);
    expectFailure(removeByMember.body, 403, 'Only the company owner may do this');
    expect(await tables()).toEqual(before);
  });

  it("refuses another company's :companyUuid with 403 on every members route", async () => {
    const before = await tables();
    const calls = [
      t.http().get(usersPath(other.companyUuid)),
      t.http().post(usersPath(other.companyUuid)).send({ email: uniqueEmail(), fullName: 'X' }),
      t.http().delete(`${usersPath(other.companyUuid)}/${other.userUuid}`),
    ];
    for (const call of calls) {
      const res = await call.set(...bearer(owner.accessToken));
      expect(res.status).toBe(403);
      expectFailure(res.body, 403, 'This company is not yours');
    }
    expect(await tables()).toEqual(before);
  });

  it('an owner removes a member: user and contact deleted, its tokens refused at once, its e-mail free again', async () => {
    const member = await activeMember(owner);
    const row = await userRow(member.email);
    const before = await tables();
    const res = await t
      .http()
      .delete(`${usersPath(owner.companyUuid)}/${member.uuid}`)
      .set(...bearer(owner.accessToken))
      .expect(200);
    expect(res.body).toMatchObject({ status: 'success', code: 200, data: {} });
    expect(await userRow(member.email)).toBeNull();
    expect(await t.dataSource.getRepository(Contact).findOne({ where: { id: row!.contactId } })).toBeNull();
    expect(await tables()).toMatchObject({ users: before.users - 1, contacts: before.contacts - 1 });

    const me = await t
      .http()
      .get('/api/v1/users/me')
      .set(...bearer(member.accessToken))
      .expect(401);
    expectFailure(me.body, 401);
    await t.http().post('/api/v1/refresh').send({ refreshToken: member.refreshToken }).expect(401);

    // The address may now join another company.
    await invite(other, other.companyUuid, { email: member.email, fullName: 'Moved On' }).expect(201);
  });

  it('answers 404 for a user who is not in the company, 400 for a malformed uuid, writing nothing', async () => {
    const before = await tables();
    for (const userUuid of [other.userUuid, '00000000-0000-4000-8000-000000000000']) {
      const res = await t
        .http()
        .delete(`${usersPath(owner.companyUuid)}/${userUuid}`)
        .set(...bearer(owner.accessToken))
        .expect(404);
      expectFailure(res.body, 404, 'User not found');
    }
    const bad = await t
      .http()
      .delete(`${usersPath(owner.companyUuid)}/not-a-uuid`)
      .set(...bearer(owner.accessToken))
      .expect(400);
    expectFailure(bad.body, 400);
    expect(await tables()).toEqual(before);
    expect(await userRow(other.email)).not.toBeNull();
  });

  it('refuses to remove the last owner (409); with a second owner, an owner may leave', async () => {
    const solo = await createActiveUser(t);
    const before = await tables();
    const res = await t
      .http()
      .delete(`${usersPath(solo.companyUuid)}/${solo.userUuid}`)
      .set(...bearer(solo.accessToken))
      .expect(409);
    expectFailure(res.body, 409, 'The last owner of the company cannot be removed');
    expect(await tables()).toEqual(before);

    const coOwner = await activeMember(solo);
    await t.dataSource.getRepository(User).update({ uuid: coOwner.uuid }, { companyRole: 'owner' });
    await t
      .http()
      .delete(`${usersPath(solo.companyUuid)}/${solo.userUuid}`)
      .set(...bearer(coOwner.accessToken))
      .expect(200);
    expect(await userRow(solo.email)).toBeNull();
    const last = await t
      .http()
      .delete(`${usersPath(solo.companyUuid)}/${coOwner.uuid}`)
      .set(...bearer(coOwner.accessToken))
      .expect(409);
    expectFailure(last.body, 409, 'The last owner of the company cannot be removed');
  });
});
