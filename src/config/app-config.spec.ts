import { createSecretKey } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppConfig, ConfigurationError } from './app-config';
import { DEVELOPMENT_SECRETS_FILE } from './development-secrets';

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

  it('reads RELAY_SUBMIT_CONCURRENCY as a positive whole number (empty = 50)', () => {
    expect(AppConfig.fromEnv({ RELAY_SUBMIT_CONCURRENCY: '4' }, quiet).env.RELAY_SUBMIT_CONCURRENCY).toBe(4);
    expect(AppConfig.fromEnv({ RELAY_SUBMIT_CONCURRENCY: '' }, quiet).env.RELAY_SUBMIT_CONCURRENCY).toBe(50);
    expect(problemsOf({ RELAY_SUBMIT_CONCURRENCY: '0' })).toEqual([
      expect.stringMatching(/RELAY_SUBMIT_CONCURRENCY/),
    ]);
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
    [{ HOST: 'localhost' }, /HOST must be an IPv4 or IPv6 address/],
  ])('refuses %j', (env, message) => {
    expect(problemsOf(env)).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  });
});

describe('AppConfig HOST', () => {
  it('binds loopback outside production, every interface in production, HOST when set', () => {
    expect(AppConfig.fromEnv({}, quiet).host).toBe('127.0.0.1');
    expect(AppConfig.fromEnv({ NODE_ENV: 'test', HOST: '' }, quiet).host).toBe('127.0.0.1');
    expect(AppConfig.fromEnv(PRODUCTION, quiet).host).toBe('0.0.0.0');
    expect(AppConfig.fromEnv({ HOST: '0.0.0.0' }, quiet).host).toBe('0.0.0.0');
    expect(AppConfig.fromEnv({ ...PRODUCTION, HOST: '::1' }, quiet).host).toBe('::1');
  });
});

describe('AppConfig development secrets kept in DATA_DIR', () => {
  let dataDir: string;
  const keep = { keepGeneratedSecrets: true };
  const file = () => join(dataDir, DEVELOPMENT_SECRETS_FILE);
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'relay-config-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('two starts on the same DATA_DIR without secrets in the environment get the same secrets', () => {
    const warnings: string[] = [];
    const logger = { warn: (m: string) => void warnings.push(m) };
    const first = AppConfig.fromEnv({ DATA_DIR: dataDir }, logger, keep);
    const second = AppConfig.fromEnv({ DATA_DIR: dataDir }, logger, keep);

    expect(first.keys.access.equals(second.keys.access)).toBe(true);
    expect(first.keys.refresh.equals(second.keys.refresh)).toBe(true);
    expect(first.keys.verification.equals(second.keys.verification)).toBe(true);
    expect(first.keys.reset.equals(second.keys.reset)).toBe(true);
    expect(first.encryptionKey.equals(second.encryptionKey)).toBe(true);
    expect(first.keys.access.equals(first.keys.refresh)).toBe(false);
    expect(first.encryptionKey).toHaveLength(32);

    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir)).toEqual([DEVELOPMENT_SECRETS_FILE]); // no temporary file left
    expect(first.keptSecrets).toEqual({ path: file(), created: true, names: expect.any(Array) });
    expect(second.keptSecrets).toMatchObject({ path: file(), created: false });
    expect(second.keptSecrets!.names).toHaveLength(5);
    // The warning says where they are kept, never what they are.
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) expect(warning).toContain(`kept in ${file()} (mode 0600)`);
    const text = readFileSync(file(), 'utf8');
    const encryptionKey = /^ENCRYPTION_KEY=(.+)$/m.exec(text)![1];
    expect(Buffer.from(encryptionKey, 'base64').equals(first.encryptionKey)).toBe(true);
    for (const warning of warnings) expect(warning).not.toContain(encryptionKey);
  });

  it('a value set in the environment wins over the kept one', () => {
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    const key = Buffer.alloc(32, 9).toString('base64');
    const config = AppConfig.fromEnv(
      { DATA_DIR: dataDir, JWT_ACCESS_SECRET: strong('x'), ENCRYPTION_KEY: key },
      quiet,
      keep,
    );
    expect(config.keys.access.equals(createSecretKey(Buffer.from(strong('x'))))).toBe(true);
    expect(config.encryptionKey.equals(Buffer.from(key, 'base64'))).toBe(true);
    expect(config.keptSecrets!.names).toEqual([
      'JWT_REFRESH_SECRET',
      'JWT_VERIFICATION_SECRET',
      'JWT_RESET_SECRET',
    ]);
    expect(config.secretsWarning).not.toMatch(/ENCRYPTION_KEY|encrypted/);
  });

  it('writes nothing when the environment sets every secret, in tests, or when not asked', () => {
    const all = { ...PRODUCTION, NODE_ENV: 'development', DATA_DIR: dataDir };
    expect(AppConfig.fromEnv(all, quiet, keep).keptSecrets).toBeUndefined();
    const test = AppConfig.fromEnv({ NODE_ENV: 'test', DATA_DIR: dataDir }, quiet, keep);
    expect(test.keptSecrets).toBeUndefined();
    expect(test.secretsWarning).toMatch(/^Generated for this process only/);
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('production without secrets still refuses to start with the same message, and keeps no file', () => {
    expect(() => AppConfig.fromEnv({ NODE_ENV: 'production', DATA_DIR: dataDir }, quiet, keep)).toThrow(
      ConfigurationError,
    );
    try {
      AppConfig.fromEnv({ NODE_ENV: 'production', DATA_DIR: dataDir }, quiet, keep);
    } catch (e) {
      expect((e as ConfigurationError).problems).toEqual([
        'JWT_ACCESS_SECRET is required in production',
        'JWT_REFRESH_SECRET is required in production',
        'JWT_VERIFICATION_SECRET is required in production',
        'JWT_RESET_SECRET is required in production',
        'ENCRYPTION_KEY is required in production',
      ]);
    }
    expect(readdirSync(dataDir)).toEqual([]);
    // A file kept by development starts is not read in production either.
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    expect(problemsOf({ NODE_ENV: 'production', DATA_DIR: dataDir })).toContain(
      'ENCRYPTION_KEY is required in production',
    );
  });

  it('creates DATA_DIR when it is not there yet', () => {
    const nested = join(dataDir, 'a', 'b');
    AppConfig.fromEnv({ DATA_DIR: nested }, quiet, keep);
    expect(statSync(join(nested, DEVELOPMENT_SECRETS_FILE)).mode & 0o777).toBe(0o600);
  });

  it('refuses a damaged file, naming it, and never replaces it', () => {
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    const damaged = readFileSync(file(), 'utf8').replace(/^ENCRYPTION_KEY=.*$/m, 'ENCRYPTION_KEY=c2hvcnQ=');
    writeFileSync(file(), damaged);
    expect(problemsOf({ DATA_DIR: dataDir })).toEqual([]); // not asked to keep: not read
    let problems: string[] = [];
    try {
      AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    } catch (e) {
      problems = (e as ConfigurationError).problems;
    }
    expect(problems).toEqual([expect.stringContaining(`${file()}: ENCRYPTION_KEY is not 32 bytes`)]);
    expect(readFileSync(file(), 'utf8')).toBe(damaged);
    // Setting the value in the environment is a way out.
    const key = Buffer.alloc(32, 3).toString('base64');
    expect(
      AppConfig.fromEnv({ DATA_DIR: dataDir, ENCRYPTION_KEY: key }, quiet, keep).keptSecrets,
    ).toBeDefined();
  });

  it('narrows a kept file that others may read back to 0600', () => {
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    chmodSync(file(), 0o644);
    AppConfig.fromEnv({ DATA_DIR: dataDir }, quiet, keep);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
  });
});
