import { AppConfig, ConfigurationError } from './app-config';

const quiet = { warn: () => undefined };
const strong = (c: string) => c.repeat(40);
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_ACCESS_SECRET: strong('a'),
  JWT_REFRESH_SECRET: strong('b'),
  JWT_VERIFICATION_SECRET: strong('c'),
  JWT_RESET_SECRET: strong('d'),
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
};

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    AppConfig.fromEnv(env, quiet);
    return [];
  } catch (e) {
    if (e instanceof ConfigurationError) return e.problems;
    throw e;
  }
}

describe('AppConfig', () => {
  it('applies the defaults of the configuration table', () => {
    const config = AppConfig.fromEnv({}, quiet);
    expect(config.env).toMatchObject({
      PORT: 3000,
      NODE_ENV: 'development',
      JWT_ACCESS_TTL: '60s',
      JWT_REFRESH_TTL: '1d',
      RATE_LIMIT_PER_MINUTE: 600,
      LOGIN_RATE_LIMIT_PER_MINUTE: 10,
      APP_URL: 'http://localhost:5173',
      POLICY_PORT: 10040,
      SASL_PORT: 10041,
      MILTER_PORT: 10042,
      SMTP_LINE_LENGTH_LIMIT: 990,
      RELAY_AGENT_HOST: '127.0.0.1',
      MAX_DOMAINS_PER_COMPANY: 50,
    });
    expect(config.publicUrl).toBe('http://localhost:3000');
    expect(config.corsOrigins).toEqual(['http://localhost:5173']);
    expect(config.logLevel).toBe('info');
  });

  it('generates distinct secrets outside production, held as KeyObjects', () => {
    const { keys } = AppConfig.fromEnv({}, quiet);
    expect(keys.access.type).toBe('secret');
    expect(keys.access.equals(keys.refresh)).toBe(false);
  });

  it('reads the relay agent listeners; 0 turns one off, an empty value means the default', () => {
    const { env } = AppConfig.fromEnv({ SASL_PORT: '0', MILTER_PORT: '', RELAY_AGENT_HOST: '::1' }, quiet);
    expect(env).toMatchObject({ SASL_PORT: 0, MILTER_PORT: 10042, RELAY_AGENT_HOST: '::1' });
  });

  it("reads SMTP_LINE_LENGTH_LIMIT (Postfix's smtp_line_length_limit): default 990, 0 for no folding", () => {
    expect(AppConfig.fromEnv({ SMTP_LINE_LENGTH_LIMIT: '' }, quiet).env.SMTP_LINE_LENGTH_LIMIT).toBe(990);
    expect(AppConfig.fromEnv({ SMTP_LINE_LENGTH_LIMIT: '0' }, quiet).env.SMTP_LINE_LENGTH_LIMIT).toBe(0);
    expect(AppConfig.fromEnv({ SMTP_LINE_LENGTH_LIMIT: '998' }, quiet).env.SMTP_LINE_LENGTH_LIMIT).toBe(998);
  });

  it('reads AGENT_HTTP_PORT (default 10043, 0 off) and METRICS_TOKEN (unset when empty, else at least 32 characters)', () => {
    expect(AppConfig.fromEnv({}, quiet).env).toMatchObject({
      AGENT_HTTP_PORT: 10043,
      METRICS_TOKEN: undefined,
    });
    expect(AppConfig.fromEnv({ AGENT_HTTP_PORT: '0', METRICS_TOKEN: '' }, quiet).env).toMatchObject({
      AGENT_HTTP_PORT: 0,
      METRICS_TOKEN: undefined,
    });
    const token = 'x'.repeat(32);
    expect(AppConfig.fromEnv({ METRICS_TOKEN: token }, quiet).env.METRICS_TOKEN).toBe(token);
    expect(problemsOf({ METRICS_TOKEN: 'x'.repeat(31) })).toEqual([
      'METRICS_TOKEN must be at least 32 characters long',
    ]);
  });

  it('reads MAX_DOMAINS_PER_COMPANY as a positive whole number (empty = the default)', () => {
    expect(AppConfig.fromEnv({ MAX_DOMAINS_PER_COMPANY: '3' }, quiet).env.MAX_DOMAINS_PER_COMPANY).toBe(3);
    expect(AppConfig.fromEnv({ MAX_DOMAINS_PER_COMPANY: '' }, quiet).env.MAX_DOMAINS_PER_COMPANY).toBe(50);
    expect(problemsOf({ MAX_DOMAINS_PER_COMPANY: '0' })).toEqual([
      expect.stringMatching(/MAX_DOMAINS_PER_COMPANY/),
    ]);
    expect(problemsOf({ MAX_DOMAINS_PER_COMPANY: 'many' })).toEqual(
      expect.arrayContaining(['MAX_DOMAINS_PER_COMPANY must be an integer number']),
    );
  });

  it('starts in production when every secret is strong and distinct', () => {
    expect(problemsOf(PRODUCTION)).toEqual([]);
  });

  it('lists every problem at once in production', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      JWT_ACCESS_SECRET: 'short',
      JWT_REFRESH_SECRET: strong('b'),
      JWT_VERIFICATION_SECRET: strong('b'),
      PORT: 'eighty',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'JWT_ACCESS_SECRET must be at least 32 characters long',
        'JWT_RESET_SECRET is required in production',
        'the four JWT secrets must all differ',
        'ENCRYPTION_KEY is required in production',
        expect.stringMatching(/PORT/),
      ]),
    );
  });

  it.each([
    [{ ENCRYPTION_KEY: 'dG9vIHNob3J0' }, /ENCRYPTION_KEY must be 32 bytes/],
    [{ ADMIN_EMAIL: 'a@b.co' }, /ADMIN_EMAIL and ADMIN_PASSWORD must be set together/],
    [{ ADMIN_EMAIL: 'a@b.co', ADMIN_PASSWORD: 'short' }, /ADMIN_PASSWORD must be 10 to 128/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    [{ JWT_ACCESS_TTL: 'soon' }, /JWT_ACCESS_TTL must be a duration/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
    [{ SASL_PORT: '65536' }, /SASL_PORT/],
    [{ MILTER_PORT: 'ten' }, /MILTER_PORT/],
    [{ SMTP_LINE_LENGTH_LIMIT: 'ten' }, /SMTP_LINE_LENGTH_LIMIT/],
    [{ SMTP_LINE_LENGTH_LIMIT: '-1' }, /SMTP_LINE_LENGTH_LIMIT/],
    [{ SMTP_LINE_LENGTH_LIMIT: '990.5' }, /SMTP_LINE_LENGTH_LIMIT/],
    [{ SMTP_LINE_LENGTH_LIMIT: '1' }, /SMTP_LINE_LENGTH_LIMIT must be 0 \(no folding\) or at least 2/],
    [{ RELAY_AGENT_HOST: 'relay.example' }, /RELAY_AGENT_HOST must be an IPv4 or IPv6 address/],
  ])('refuses %j', (env, message) => {
    expect(problemsOf(env)).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  });
});
