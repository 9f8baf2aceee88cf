import { newRelayPassword, relayPasswordDigest } from './relay-credentials';

describe('relay passwords', () => {
  it('are 24 random bytes in base64url, never starting with a dash (read as an option on command lines)', () => {
    const passwords = Array.from({ length: 5_000 }, () => newRelayPassword());
    for (const password of passwords) {
      expect(password).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{31}$/);
      expect(Buffer.from(password, 'base64url')).toHaveLength(24);
    }
    // 5,000 draws: a generator that let a leading dash through would show one with a
    // probability of 1 - (63/64)^5000, all but certain.
    expect(new Set(passwords).size).toBe(passwords.length);
  });

  it('are stored as sha256:<hex> of the password', () => {
    expect(relayPasswordDigest('x')).toBe(
      'sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881',
    );
  });
});
