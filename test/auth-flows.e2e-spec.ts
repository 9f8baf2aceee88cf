import { createTestApp, TestApp } from './support/test-app';
import { countAll, expectFailure, loginUser, PASSWORD, registerUser } from './support/factories';
import { tokenFromLink } from './support/smtp-sink';

describe('User sign-up and password flows (real SMTP on loopback)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('register → verification e-mail → verify → login', async () => {
    const email = 'Ada.Lovelace@Example.COM ';
    const res = await t
      .http()
      .post('/api/v1/users/register')
      .send({
        companyName: 'Analytical Engines',
        fullName: 'Ada Lovelace',
        email,
        password: PASSWORD,
        phone: '+62 812 3456 7890',
      })
      .expect(201);
    expect(res.body).toMatchObject({
      status: 'success',
      code: 201,
      data: {
        user: { email: 'ada.lovelace@example.com', status: 'pending', role: 'owner' },
        company: { name: 'Analytical Engines', status: 'active', relayStatus: 'no_package' },
      },
    });
    expect(res.body.data.user).not.toHaveProperty('passwordHash');

    const [row] = await t.dataSource.query(
      'SELECT u.status, u.password_hash, c.full_name, co.name, co.relay_username FROM users u JOIN contacts c ON c.id = u.contact_id JOIN companies co ON co.id = u.company_id WHERE u.email = $1'.replace(
        '$1',
        t.dataSource.options.type === 'postgres' ? '$1' : '?',
      ),
      ['ada.lovelace@example.com'],
    );
    expect(row).toMatchObject({ status: 'pending', full_name: 'Ada Lovelace', name: 'Analytical Engines' });
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(row.relay_username).toMatch(/^r-[0-9a-z]{8}$/);

    // A pending user cannot log in yet.
    const early = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: 'ada.lovelace@example.com', password: PASSWORD })
      .expect(403);
    expectFailure(early.body, 403, 'Email address is not verified');

    const mail = await t.smtp.waitFor('ada.lovelace@example.com', /verify/i);
    expect(mail.text).toContain('http://app.test/verify-email?token=');
    expect(mail.html).toContain('http://app.test/verify-email?token=');
    const token = tokenFromLink(mail, '/verify-email');

    const verified = await t.http().post('/api/v1/users/verify-email').send({ token }).expect(200);
    expect(verified.body).toEqual({
      status: 'success',
      code: 200,
      msg: 'Email verified',
      data: { verified: true, alreadyVerified: false },
    });
    const again = await t.http().post('/api/v1/users/verify-email').send({ token }).expect(200);
    expect(again.body).toEqual({
      status: 'success',
      code: 200,
      msg: 'Email already verified',
      data: { verified: true, alreadyVerified: true },
    });

    const login = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: 'ADA.LOVELACE@example.com', password: PASSWORD })
      .expect(200);
    expect(login.body.data).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 60,
      user: { email: 'ada.lovelace@example.com', status: 'active' },
      contact: { fullName: 'Ada Lovelace', phone: '+62 812 3456 7890' },
      company: { name: 'Analytical Engines', relayStatus: 'no_package' },
    });
    const me = await t
      .http()
      .get('/api/v1/users/me')
      .set('authorization', `Bearer ${login.body.data.accessToken}`)
      .expect(200);
    expect(me.body.data).toEqual({
      user: expect.any(Object),
      contact: login.body.data.contact,
      company: login.body.data.company,
    });
    expect(me.body.data.user.lastLoginAt).not.toBeNull();
  });

  it('refuses a second registration of the same e-mail with 409 and writes nothing', async () => {
    const user = await registerUser(t);
    const before = await countAll(t);
    const res = await t
      .http()
      .post('/api/v1/users/register')
      .send({ companyName: 'Other', fullName: 'Other', email: user.email.toUpperCase(), password: PASSWORD })
      .expect(409);
    expectFailure(res.body, 409, 'Email is already registered');
    expect(await countAll(t)).toEqual(before);
  });

  it('forgot → reset → old password refused → the reset link refused the second time', async () => {
    const user = await registerUser(t);
    await t.http().post('/api/v1/users/forgot-password').send({ email: user.email }).expect(200);
    const mail = await t.smtp.waitFor(user.email, /reset/i);
    const token = tokenFromLink(mail, '/reset-password');
    expect(mail.text).toContain('http://app.test/reset-password?token=');

    await t
      .http()
      .post('/api/v1/users/reset-password')
      .send({ token, password: 'a brand new secret' })
      .expect(200);
    // The account was pending: verify to log in, then the old password no longer works.
    const verify = await t.smtp.waitFor(user.email, /verify/i);
    await t
      .http()
      .post('/api/v1/users/verify-email')
      .send({ token: tokenFromLink(verify, '/verify-email') })
      .expect(200);
    const old = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: user.email, password: PASSWORD })
      .expect(401);
    expectFailure(old.body, 401, 'Invalid email or password');
    await loginUser(t, user.email, 'a brand new secret');

    const reused = await t
      .http()
      .post('/api/v1/users/reset-password')
      .send({ token, password: 'yet another secret' })
      .expect(401);
    expectFailure(reused.body, 401, 'Invalid or expired reset token');
    await loginUser(t, user.email, 'a brand new secret');
  });

  it('answers forgot-password and resend-verification the same for unknown e-mails, and sends nothing', async () => {
    const ghost = 'nobody-here@example.com';
    const a = await t.http().post('/api/v1/users/forgot-password').send({ email: ghost }).expect(200);
    const b = await t.http().post('/api/v1/users/resend-verification').send({ email: ghost }).expect(200);
    expect(a.body.data).toEqual({});
    expect(b.body.data).toEqual({});
    await t.settle();
    expect(t.smtp.count(ghost)).toBe(0);
  });

  it('resend-verification sends a fresh link to a pending user', async () => {
    const user = await registerUser(t);
    await t.smtp.waitFor(user.email, /verify/i);
    await t.http().post('/api/v1/users/resend-verification').send({ email: user.email }).expect(200);
    const second = await t.smtp.waitFor(user.email, /verify/i, 2);
    await t
      .http()
      .post('/api/v1/users/verify-email')
      .send({ token: tokenFromLink(second, '/verify-email') })
      .expect(200);
    await loginUser(t, user.email);
  });

  it('gives the same 401 for an unknown e-mail and a wrong password', async () => {
    const user = await registerUser(t);
    const unknown = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: 'ghost@example.com', password: PASSWORD })
      .expect(401);
    const wrong = await t
      .http()
      .post('/api/v1/users/login')
      .send({ email: user.email, password: 'not the password' })
      .expect(401);
    expect(unknown.body).toEqual(wrong.body);
    expectFailure(unknown.body, 401, 'Invalid email or password');
  });
});
