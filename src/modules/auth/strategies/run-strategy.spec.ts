import { BasicStrategy } from 'passport-http';
import { runStrategy } from './run-strategy';

const basicRequest = (pair: string) => ({
  headers: { authorization: `Basic ${Buffer.from(pair).toString('base64')}` },
});

describe('runStrategy', () => {
  const strategy = new BasicStrategy((user, password, done) =>
    user === 'boom' ? done(new Error('store down')) : done(null, password === 'right' ? { user } : false),
  );

  it('returns the user a synchronous strategy verified', () => {
    expect(runStrategy(strategy, basicRequest('ann:right'))).toEqual({ user: { user: 'ann' } });
  });

  it('returns a refusal with its challenge, and an error as an error', () => {
    expect(runStrategy(strategy, basicRequest('ann:wrong'))).toEqual({
      user: false,
      info: 'Basic realm="Users"',
    });
    expect(runStrategy(strategy, { headers: {} })).toEqual({ user: false, info: 'Basic realm="Users"' });
    expect(runStrategy(strategy, basicRequest('boom:x'))).toEqual({
      user: false,
      error: new Error('store down'),
    });
  });

  it('refuses a strategy that answers later instead of letting the request through', () => {
    const later = new BasicStrategy((_user, _password, done) => setImmediate(() => done(null, false)));
    expect(() => runStrategy(later, basicRequest('ann:right'))).toThrow(/asynchronously/);
  });
});
