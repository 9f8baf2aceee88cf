import { Logger } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsIP,
  IsInt,
  IsOptional,
  IsString,
  IsTimeZone,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  NotEquals,
  validateSync,
} from 'class-validator';
import { createSecretKey, KeyObject, randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { KEPT_SECRET_NAMES, KeptSecretName, loadOrCreateDevelopmentSecrets } from './development-secrets';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value !== '' ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
/** An empty variable (as `.env.example` leaves it) means the default. */
const emptyTo =
  (fallback: unknown) =>
  ({ value }: { value: unknown }) =>
    value === '' || value === undefined ? fallback : value;

const DURATION = /^\d+(ms|s|m|h|d)?$/;

/** The environment as the spec's configuration table describes it; defaults are the initialisers. */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /**
   * The address the HTTP server binds; unset: 127.0.0.1 outside production (a development start,
   * with its generated secrets, is not reachable from the network), 0.0.0.0 in production.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIP(undefined, { message: 'HOST must be an IPv4 or IPv6 address' })
  HOST?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  @IsString()
  DATA_DIR = './data';

  @Transform(emptyToUndefined) @IsOptional() @IsString() JWT_ACCESS_SECRET?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() JWT_REFRESH_SECRET?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() JWT_VERIFICATION_SECRET?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() JWT_RESET_SECRET?: string;

  @Matches(DURATION, { message: 'JWT_ACCESS_TTL must be a duration such as 60s, 15m, 1h' })
  JWT_ACCESS_TTL = '60s';

  @Matches(DURATION, { message: 'JWT_REFRESH_TTL must be a duration such as 1d, 12h' })
  JWT_REFRESH_TTL = '1d';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  ENCRYPTION_KEY?: string;

  @Transform(emptyToUndefined) @IsOptional() @IsString() ADMIN_EMAIL?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() ADMIN_PASSWORD?: string;

  @IsUrl({ require_tld: false, require_protocol: true })
  APP_URL = 'http://localhost:5173';

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  PUBLIC_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^smtps?:\/\//, { message: 'SMTP_URL must be an smtp:// or smtps:// URL' })
  SMTP_URL?: string;

  @IsString()
  MAIL_FROM = 'Relay <no-reply@relay.local>';

  @Transform(emptyToUndefined) @IsOptional() @IsString() INTERNAL_API_KEY?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() LOG_SHIPPER_API_KEY?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() PAYMENT_CALLBACK_TOKEN?: string;
  @Transform(emptyTo('https://api.xendit.co'))
  @IsUrl({ require_tld: false, require_protocol: true })
  PAYMENT_GATEWAY_URL = 'https://api.xendit.co';

  @Transform(emptyToUndefined) @IsOptional() @IsString() PAYMENT_GATEWAY_SECRET_KEY?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  PAYMENT_SUCCESS_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  PAYMENT_FAILURE_URL?: string;

  /** Seconds a gateway invoice stays payable. */
  @Transform((p) => toInt({ value: emptyTo(172800)(p) })) @IsInt() @Min(1) PAYMENT_INVOICE_DURATION = 172800;

  /** How long a call to the payment gateway may take (ms). */
  @Transform((p) => toInt({ value: emptyTo(10000)(p) })) @IsInt() @Min(1) PAYMENT_GATEWAY_TIMEOUT_MS = 10000;

  @Transform(emptyToUndefined) @IsOptional() @IsString() MAIL_PROVIDER_WEBHOOK_USER?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() MAIL_PROVIDER_WEBHOOK_PASSWORD?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL?: string;

  @Transform(toInt) @IsInt() @Min(1) RATE_LIMIT_PER_MINUTE = 600;
  @Transform(toInt) @IsInt() @Min(1) LOGIN_RATE_LIMIT_PER_MINUTE = 10;
  @Transform(toInt) @IsInt() @Min(1) EMAIL_RATE_LIMIT_PER_HOUR = 5;
  /** Requests a minute per customer API key (counted per key, not per address). */
  @Transform(toInt) @IsInt() @Min(1) API_KEY_RATE_LIMIT_PER_MINUTE = 1200;

  /** Spam reports within 24 hours that suspend a company. */
  @Transform(toInt) @IsInt() @Min(1) SPAM_SUSPEND_THRESHOLD = 5;

  @Transform(emptyToUndefined) @IsOptional() @IsString() CORS_ORIGINS?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @Transform(toBool) @IsBoolean() TRUST_PROXY = false;

  /** Webhook URLs may be http:// (default: outside production only). */
  @Transform((p) => toBool({ value: emptyToUndefined(p) }))
  @IsOptional()
  @IsBoolean()
  WEBHOOK_ALLOW_HTTP?: boolean;
  /** Webhooks may reach loopback and private addresses (tests, private deployments). */
  @Transform((p) => toBool({ value: emptyTo('false')(p) })) @IsBoolean() WEBHOOK_ALLOW_PRIVATE_TARGETS =
    false;
  /** Webhook attempts in flight at once in this process, shared fairly by the endpoints. */
  @Transform(toInt) @IsInt() @Min(1) WEBHOOK_CONCURRENCY = 50;
  /** This process sends webhooks (turn off for replicas that only serve the API). */
  @Transform((p) => toBool({ value: emptyTo('true')(p) })) @IsBoolean() WEBHOOK_DISPATCHER = true;

  /**
   * Where messages sent by HTTP are submitted (platform.md "Sending by HTTP"): the relay's
   * Postfix, `smtp://host:port` (STARTTLS when offered) or `smtps://host:port`. Unset: the
   * /api/v1/emails routes answer 503.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^smtps?:\/\/[^\s/]+(:\d+)?\/?$/, {
    message: 'RELAY_SUBMIT_URL must be smtp://host:port or smtps://host:port',
  })
  RELAY_SUBMIT_URL?: string;
  /**
   * The key of the submission tokens (HMAC) the service authenticates with at the relay and the
   * relay agent accepts: the same value on both; at least 32 characters.
   */
  @Transform(emptyToUndefined) @IsOptional() @IsString() RELAY_SUBMIT_SECRET?: string;
  /**
   * This process hands stored messages to the relay (turn off for replicas that only serve the
   * API, and run the hand-over in replicas of its own, as WEBHOOK_DISPATCHER).
   */
  @Transform((p) => toBool({ value: emptyTo('true')(p) })) @IsBoolean() EMAIL_SUBMITTER = true;
  /** Messages this process hands to the relay at once (SMTP transactions in flight). */
  @Transform((p) => toInt({ value: emptyTo(50)(p) })) @IsInt() @Min(1) RELAY_SUBMIT_CONCURRENCY = 50;

  /** Comma-separated `ip[:port]` resolvers for domain checks; empty = the system's. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^\s*[0-9a-fA-F.:[\]]+(\s*,\s*[0-9a-fA-F.:[\]]+)*\s*$/, {
    message: 'DNS_SERVERS must be comma-separated ip[:port] addresses',
  })
  DNS_SERVERS?: string;

  /** Bound of each DNS query of a domain check, in ms (integrations.md "DNS": 5 s). */
  @Transform((p) => toInt({ value: emptyTo(5000)(p) })) @IsInt() @Min(1) DNS_TIMEOUT_MS = 5000;

  @Transform(emptyTo('Relay')) @IsString() RELAY_NAME = 'Relay';
  @Transform(emptyTo('smtp.relay.local')) @IsString() RELAY_SMARTHOST = 'smtp.relay.local';
  @Transform(emptyToUndefined) @IsOptional() @IsString() RELAY_TLS_DOMAIN?: string;
  @Transform(emptyTo('_spf.relay.local')) @IsString() SPF_INCLUDE = '_spf.relay.local';
  @Transform(emptyTo('bounce')) @IsString() RETURN_PATH_PREFIX = 'bounce';
  @Transform(emptyTo('rp.relay.local')) @IsString() RETURN_PATH_HOST = 'rp.relay.local';

  /** Sender domains one company may hold (resources.md "Domain"); one more is a 409. */
  @Transform((p) => toInt({ value: emptyTo(50)(p) })) @IsInt() @Min(1) MAX_DOMAINS_PER_COMPANY = 50;

  /** relay-status refuses senders whose domain is not verified. */
  @Transform((p) => toBool({ value: emptyTo('true')(p) })) @IsBoolean() RELAY_REQUIRE_VERIFIED_DOMAIN = true;

  /** Port of the relay agent's Postfix policy listener (`npm run relay-agent`); 0 turns it off. */
  @Transform((p) => toInt({ value: emptyTo(10040)(p) }))
  @IsInt()
  @Min(0)
  @Max(65535)
  POLICY_PORT = 10040;

  /** Port of the relay agent's SMTP AUTH listener (Dovecot protocol); 0 turns it off. */
  @Transform((p) => toInt({ value: emptyTo(10041)(p) }))
  @IsInt()
  @Min(0)
  @Max(65535)
  SASL_PORT = 10041;

  /** Port of the relay agent's milter (DKIM signing, From alignment); 0 turns it off. */
  @Transform((p) => toInt({ value: emptyTo(10042)(p) }))
  @IsInt()
  @Min(0)
  @Max(65535)
  MILTER_PORT = 10042;

  /**
   * Postfix's `smtp_line_length_limit`, set to the same value in main.cf: the milter signs a line
   * longer than this as Postfix's SMTP client will fold it, so the signature verifies where the
   * mail arrives. 0: Postfix does not fold (1 would make Postfix loop).
   */
  @Transform((p) => toInt({ value: emptyTo(990)(p) }))
  @IsInt()
  @Min(0)
  @NotEquals(1, { message: 'SMTP_LINE_LENGTH_LIMIT must be 0 (no folding) or at least 2' })
  SMTP_LINE_LENGTH_LIMIT = 990;

  /**
   * Port of the relay agent's HTTP listener (`GET /health`, `GET /metrics`); 0 turns it off.
   * It binds RELAY_AGENT_HOST like the others.
   */
  @Transform((p) => toInt({ value: emptyTo(10043)(p) }))
  @IsInt()
  @Min(0)
  @Max(65535)
  AGENT_HTTP_PORT = 10043;

  /**
   * The bearer token of `GET /metrics` (API and relay agent), at least 32 characters; unset,
   * metrics are served to loopback only.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'METRICS_TOKEN must be at least 32 characters long' })
  METRICS_TOKEN?: string;

  /**
   * The address the relay agent's listeners bind. SMTP AUTH carries passwords in clear:
   * never an address reachable beyond a private network.
   */
  @Transform(emptyTo('127.0.0.1'))
  @IsIP(undefined, { message: 'RELAY_AGENT_HOST must be an IPv4 or IPv6 address' })
  RELAY_AGENT_HOST = '127.0.0.1';

  /** The CRM's OAuth server (Zoho-style, integrations.md "CRM"); the CRM is off while the client id or secret is unset. */
  @Transform(emptyTo('https://accounts.zoho.com'))
  @IsUrl({ require_tld: false, require_protocol: true })
  CRM_ACCOUNTS_URL = 'https://accounts.zoho.com';

  @Transform(emptyToUndefined) @IsOptional() @IsString() CRM_CLIENT_ID?: string;
  @Transform(emptyToUndefined) @IsOptional() @IsString() CRM_CLIENT_SECRET?: string;

  /** The public URL of `GET /api/v1/get-token`; `{PUBLIC_URL}/api/v1/get-token` when unset. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  CRM_REDIRECT_URI?: string;

  @Transform(emptyTo('ZohoCRM.modules.accounts.ALL,ZohoCRM.modules.contacts.ALL'))
  @IsString()
  CRM_SCOPES = 'ZohoCRM.modules.accounts.ALL,ZohoCRM.modules.contacts.ALL';

  /** How long one call to the CRM may take (ms). */
  @Transform((p) => toInt({ value: emptyTo(10000)(p) })) @IsInt() @Min(1) CRM_TIMEOUT_MS = 10000;

  /** The zone (IANA name) of syslog times that carry none, in shipped Postfix logs. */
  @Transform(emptyTo('UTC')) @IsTimeZone() LOG_TIMEZONE = 'UTC';

  /** The clean-log index in Elasticsearch (`http://host:9200`); unset = SQL tables of the service's database. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  ELASTICSEARCH_NODE?: string;
}

export interface SecretKeys {
  access: KeyObject;
  refresh: KeyObject;
  verification: KeyObject;
  reset: KeyObject;
}

/** Where a development start keeps the secrets the environment does not set (development-secrets.ts). */
export interface KeptSecrets {
  /** Absolute path of the file in DATA_DIR. */
  path: string;
  /** True when this start generated it. */
  created: boolean;
  /** The secrets taken from it (those the environment does not set). */
  names: KeptSecretName[];
}

export interface FromEnvOptions {
  /**
   * In development, keep the secrets the environment does not set in DATA_DIR
   * (`development-secrets.env`, mode 0600) and reuse them at the next start. The entry points
   * and AppConfigModule ask for it; otherwise (unit specs, tools, NODE_ENV=test) such secrets
   * are generated for the process only.
   */
  keepGeneratedSecrets?: boolean;
}

export class ConfigurationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const SECRET_NAMES = [
  'JWT_ACCESS_SECRET',
  'JWT_REFRESH_SECRET',
  'JWT_VERIFICATION_SECRET',
  'JWT_RESET_SECRET',
] as const;

/**
 * The validated, typed configuration. Built once per application from the environment;
 * JWT secrets are held as KeyObjects (jsonwebtoken verifies ~50x faster with them).
 */
export class AppConfig {
  readonly env: EnvironmentVariables;
  readonly keys: SecretKeys;
  readonly encryptionKey: Buffer;
  readonly dataDir: string;
  readonly publicUrl: string;
  readonly corsOrigins: string[];
  readonly logLevel: string;
  /** The address the HTTP server binds (HOST, else by NODE_ENV). */
  readonly host: string;
  /** Secrets taken from DATA_DIR's development file, when any were. */
  readonly keptSecrets?: KeptSecrets;
  /** Secrets generated for this process only (gone at its end), when any were. */
  readonly processSecrets: string[];

  private constructor(
    env: EnvironmentVariables,
    keys: SecretKeys,
    encryptionKey: Buffer,
    generated: { kept?: KeptSecrets; processOnly: string[] },
  ) {
    this.env = env;
    this.keys = keys;
    this.encryptionKey = encryptionKey;
    this.keptSecrets = generated.kept;
    this.processSecrets = generated.processOnly;
    this.host = env.HOST ?? (env.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1');
    this.dataDir = resolve(env.DATA_DIR);
    this.publicUrl = (env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
    this.corsOrigins = (env.CORS_ORIGINS ?? env.APP_URL)
      .split(',')
      .map((o) => o.trim().replace(/\/+$/, ''))
      .filter(Boolean);
    this.logLevel = env.LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info');
  }

  get isProduction(): boolean {
    return this.env.NODE_ENV === 'production';
  }

  /** WEBHOOK_ALLOW_HTTP, by default outside production only. */
  get webhookAllowHttp(): boolean {
    return this.env.WEBHOOK_ALLOW_HTTP ?? !this.isProduction;
  }

  /** RELAY_SUBMIT_SECRET as a KeyObject (HMAC of submission tokens); undefined when unset. */
  get relaySubmitKey(): KeyObject | undefined {
    const secret = this.env.RELAY_SUBMIT_SECRET;
    if (!secret) return undefined;
    return (this.submitKey ??= createSecretKey(Buffer.from(secret, 'utf8')));
  }

  private submitKey?: KeyObject;

  /** The resolvers of DNS_SERVERS as `node:dns` takes them, or undefined for the system's. */
  get dnsServers(): string[] | undefined {
    const servers = this.env.DNS_SERVERS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return servers?.length ? servers : undefined;
  }

  get appUrl(): string {
    return this.env.APP_URL.replace(/\/+$/, '');
  }

  /**
   * What to say about secrets the environment did not set, or undefined when it set them all:
   * where they are kept (development) or that they die with the process.
   */
  get secretsWarning(): string | undefined {
    if (this.keptSecrets) {
      const { path, names } = this.keptSecrets;
      return (
        `Secrets not set in the environment (${listSecrets(names)}) are kept in ${path} ` +
        '(mode 0600) and reused at each start on this DATA_DIR. Development only: production ' +
        'requires them in the environment' +
        (names.includes('ENCRYPTION_KEY')
          ? '; deleting the file makes data encrypted at rest (DKIM keys, script URLs) unreadable'
          : '')
      );
    }
    if (this.processSecrets.length) {
      return `Generated for this process only (tokens and data encrypted at rest die with it): ${this.processSecrets.join(', ')}`;
    }
    return undefined;
  }

  static fromEnv(
    source: NodeJS.ProcessEnv = process.env,
    logger: Pick<Logger, 'warn'> = new Logger('Config'),
    options: FromEnvOptions = {},
  ): AppConfig {
    const env = plainToInstance(EnvironmentVariables, { ...source }, { exposeDefaultValues: true });
    const problems = validateSync(env, { whitelist: true, forbidUnknownValues: false }).flatMap((e) =>
      Object.values(e.constraints ?? {}),
    );

    const production = env.NODE_ENV === 'production';
    if (production) {
      for (const name of SECRET_NAMES) {
        const value = env[name];
        if (!value) problems.push(`${name} is required in production`);
        else if (value.length < 32) problems.push(`${name} must be at least 32 characters long`);
      }
      const values = SECRET_NAMES.map((n) => env[n]).filter(Boolean);
      if (new Set(values).size !== values.length) problems.push('the four JWT secrets must all differ');
      if (!env.ENCRYPTION_KEY) problems.push('ENCRYPTION_KEY is required in production');
    }
    if (env.ENCRYPTION_KEY && Buffer.from(env.ENCRYPTION_KEY, 'base64').length !== 32) {
      problems.push('ENCRYPTION_KEY must be 32 bytes, base64-encoded');
    }
    if (env.RELAY_SUBMIT_URL && !env.RELAY_SUBMIT_SECRET) {
      problems.push('RELAY_SUBMIT_SECRET is required with RELAY_SUBMIT_URL');
    }
    if (env.RELAY_SUBMIT_SECRET && env.RELAY_SUBMIT_SECRET.length < 32) {
      problems.push('RELAY_SUBMIT_SECRET must be at least 32 characters long');
    }
    if (Boolean(env.ADMIN_EMAIL) !== Boolean(env.ADMIN_PASSWORD)) {
      problems.push('ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
    }
    if (env.ADMIN_PASSWORD && (env.ADMIN_PASSWORD.length < 10 || env.ADMIN_PASSWORD.length > 128)) {
      problems.push('ADMIN_PASSWORD must be 10 to 128 characters long');
    }
    if (problems.length) throw new ConfigurationError(problems);

    // Secrets the environment does not set (never in production, refused above): kept in
    // DATA_DIR in development when asked, else generated for this process only.
    const missing = KEPT_SECRET_NAMES.filter((name) => !env[name]);
    let kept: KeptSecrets | undefined;
    const processOnly: string[] = [];
    const values: Partial<Record<KeptSecretName, string>> = {};
    if (missing.length && options.keepGeneratedSecrets && env.NODE_ENV === 'development') {
      const file = loadOrCreateDevelopmentSecrets(resolve(env.DATA_DIR));
      const broken = file.problems.filter((p) => !p.name || missing.includes(p.name));
      if (broken.length) throw new ConfigurationError(broken.map((p) => p.message));
      for (const name of missing) values[name] = file.values[name];
      kept = { path: file.path, created: file.created, names: missing };
    } else processOnly.push(...missing);

    const secret = (name: (typeof SECRET_NAMES)[number]): KeyObject => {
      const value = env[name] ?? values[name];
      return createSecretKey(value ? Buffer.from(value, 'utf8') : randomBytes(48));
    };
    const keys: SecretKeys = {
      access: secret('JWT_ACCESS_SECRET'),
      refresh: secret('JWT_REFRESH_SECRET'),
      verification: secret('JWT_VERIFICATION_SECRET'),
      reset: secret('JWT_RESET_SECRET'),
    };
    const encryptionKeyText = env.ENCRYPTION_KEY ?? values.ENCRYPTION_KEY;
    const encryptionKey = encryptionKeyText ? Buffer.from(encryptionKeyText, 'base64') : randomBytes(32);
    const config = new AppConfig(env, keys, encryptionKey, { kept, processOnly });
    const warning = config.secretsWarning;
    if (warning && env.NODE_ENV !== 'test') logger.warn(warning);
    return config;
  }
}

/** Secret names for a person: the four JWT secrets as one item when all are there. */
function listSecrets(names: readonly string[]): string {
  const jwt = SECRET_NAMES.every((name) => names.includes(name));
  const rest = names.filter((name) => !jwt || !(SECRET_NAMES as readonly string[]).includes(name));
  return [...(jwt ? ['the four JWT_*_SECRET'] : []), ...rest].join(', ');
}
