import { CredentialsService } from '../src/modules/auth/credentials.service';
import { PasswordService } from '../src/modules/auth/password.service';
import { TokenService } from '../src/modules/auth/token.service';
import { createActiveUser, createAdmin, PASSWORD, uniqueEmail } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

type Kind = 'user' | 'admin';

interface Subject {
  id: number;
  uuid: string;
  email: string;
}

/**
 * CredentialsService serves users and admins with one code path; these prove, for each kind,
 * the rules that path carries beyond what the HTTP specs reach: one hash check for an unknown
 * e-mail, a reset token of the other kind refused, and single use under concurrent requests.
 */
describe('CredentialsService, for users and admins alike', () => {
  let t: TestApp;
  let credentials: CredentialsService;

  const table = (kind: Kind) => (kind === 'user' ? 'users' : 'admins');

  const stored = async (kind: Kind, uuid: string) => {
    const param = t.dataSource.options.type === 'postgres' ? '$1' : '?';
    const [row] = await t.dataSource.query<Array<Record<string, unknown>>>(
      `SELECT id, password_hash, password_version FROM ${table(kind)} WHERE uuid = ${param}`,
      [uuid],
    );
    return { id: Number(row.id), hash: row.password_hash as string, version: Number(row.password_version) };
  };

  /** A subject of the kind, active, with PASSWORD. */
  const create = async (kind: Kind): Promise<Subject> => {
    const { uuid, email } =
      kind === 'user'
        ? await createActiveUser(t).then((u) => ({ uuid: u.userUuid, email: u.email }))
        : await createAdmin(t, 'admin');
    return { id: (await stored(kind, uuid)).id, uuid, email };
  };

  const resetToken = (subject: Subject, isAdmin: boolean, pwv: number) =>
    t.app.get(TokenService).signReset({ uuid: subject.uuid, email: subject.email, isAdmin, pwv });

  /** Exactly one of the settled calls succeeded; returns the other's error message. */
  const oneWinner = (results: PromiseSettledResult<unknown>[]): string => {
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    return (lost?.reason as Error).message;
  };

  beforeAll(async () => {
    t = await createTestApp();
    credentials = t.app.get(CredentialsService);
  });

  afterAll(async () => {
    await t.close();
  });

  describe.each<Kind>(['user', 'admin'])('%s', (kind) => {
    it('spends one hash check on an unknown e-mail and answers it as a wrong password', async () => {
      const subject = await create(kind);
      const verify = jest.spyOn(t.app.get(PasswordService), 'verify');
      try {
        await expect(credentials.login(kind, uniqueEmail('ghost'), PASSWORD)).rejects.toThrow(
          'Invalid email or password',
        );
        expect(verify).toHaveBeenCalledTimes(1);
        expect(verify.mock.calls[0][0]).toBeUndefined();

        verify.mockClear();
        await expect(credentials.login(kind, subject.email, 'not the password at all')).rejects.toThrow(
          'Invalid email or password',
        );
        expect(verify).toHaveBeenCalledTimes(1);
        expect(verify.mock.calls[0][0]).toEqual(expect.stringMatching(/^\$argon2id\$/));
      } finally {
        verify.mockRestore();
      }
    });

    it('refuses a reset token of the other kind for the same uuid, e-mail and version, and changes nothing', async () => {
      const subject = await create(kind);
      const before = await stored(kind, subject.uuid);
      const token = resetToken(subject, kind !== 'admin', before.version);
      await expect(credentials.resetPassword(kind, token, 'a taken-over password')).rejects.toThrow(
        'Invalid or expired reset token',
      );
      expect(await stored(kind, subject.uuid)).toEqual(before);
    });

    it('uses a reset token once when it is sent twice at the same time', async () => {
      const subject = await create(kind);
      const before = await stored(kind, subject.uuid);
      const token = resetToken(subject, kind === 'admin', before.version);
      const results = await Promise.allSettled([
        credentials.resetPassword(kind, token, 'first new password'),
        credentials.resetPassword(kind, token, 'second new password'),
      ]);
      expect(oneWinner(results)).toBe('Invalid or expired reset token');
      const after = await stored(kind, subject.uuid);
      expect(after.version).toBe(before.version + 1);
      const winner = results[0].status === 'fulfilled' ? 'first new password' : 'second new password';
      await expect(credentials.login(kind, subject.email, winner)).resolves.toMatchObject({
        subject: { uuid: subject.uuid },
      });
    });

    it('lets one of two concurrent password changes from the same current password through', async () => {
      const subject = await create(kind);
      const before = await stored(kind, subject.uuid);
      const results = await Promise.allSettled([
        credentials.changePassword(kind, subject.id, PASSWORD, 'first changed password'),
        credentials.changePassword(kind, subject.id, PASSWORD, 'second changed password'),
      ]);
      // The loser read the old version (409) or, if it read after the winner, the new hash (400).
      expect(['The password was changed meanwhile; try again', 'Current password is incorrect']).toContain(
        oneWinner(results),
      );
      expect((await stored(kind, subject.uuid)).version).toBe(before.version + 1);
    });
  });
});
