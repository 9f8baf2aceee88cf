import { DynamicModule, ModuleMetadata, Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module';
import { configureApp, createFastifyAdapter, NEST_APP_OPTIONS } from '../../src/configure-app';
import { TransactionService } from '../../src/database/transaction.service';
import { SmtpSink } from './smtp-sink';

/** Fixed test secrets, so tests can forge tokens (expired, wrong kind) with the real key. */
export const TEST_SECRETS = {
  JWT_ACCESS_SECRET: 'test-access-secret-0123456789abcdefghij',
  JWT_REFRESH_SECRET: 'test-refresh-secret-0123456789abcdefghi',
  JWT_VERIFICATION_SECRET: 'test-verification-secret-0123456789abcd',
  JWT_RESET_SECRET: 'test-reset-secret-0123456789abcdefghijk',
};

export const APP_URL = 'http://app.test';

export interface TestAppOptions {
  /** Environment for this app (on top of the test defaults). `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Extra modules mounted by the test only (e.g. controllers that prove machine guards). */
  imports?: Array<Type<unknown> | DynamicModule>;
  /** Start a loopback SMTP server and point SMTP_URL at it (default true). */
  smtp?: boolean;
  /** An existing database (a restart of the service): kept when the app closes. */
  database?: FreshDatabase;
}

export interface RegisteredRoute {
  method: string;
  url: string;
  config: object;
}

export interface TestApp {
  app: NestFastifyApplication;
  http: () => ReturnType<typeof request>;
  dataSource: DataSource;
  smtp: SmtpSink;
  /** Every route Fastify registered, with its route config (where the envelope decorators write). */
  routes: RegisteredRoute[];
  /**
   * Resolves once the after-commit work the app started and did not await (notification
   * e-mails sent after the response) has settled: the point from which "no e-mail came" holds.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Boots the real AppModule through configureApp(app), as production does, on a fresh
 * database: a new SQLite file, or a new PostgreSQL database when DATABASE_URL is set.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const smtp = new SmtpSink();
  if (options.smtp !== false) await smtp.start();
  const database = options.database ?? (await freshDatabase());

  const env: Record<string, string | undefined> = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    APP_URL,
    MAIL_FROM: 'Relay <no-reply@relay.test>',
    SMTP_URL: options.smtp !== false ? smtp.url : undefined,
    RATE_LIMIT_PER_MINUTE: '100000',
    LOGIN_RATE_LIMIT_PER_MINUTE: '100000',
    EMAIL_RATE_LIMIT_PER_HOUR: '100000',
    INTERNAL_API_KEY: undefined,
    LOG_SHIPPER_API_KEY: undefined,
    PAYMENT_CALLBACK_TOKEN: undefined,
    MAIL_PROVIDER_WEBHOOK_USER: undefined,
    MAIL_PROVIDER_WEBHOOK_PASSWORD: undefined,
    ADMIN_EMAIL: undefined,
    ADMIN_PASSWORD: undefined,
    REDIS_URL: undefined,
    ...TEST_SECRETS,
    ...database.env,
    ...options.env,
  };
  const restore = applyEnv(env);

  const routes: RegisteredRoute[] = [];
  let app: NestFastifyApplication;
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule, ...(options.imports ?? [])] as ModuleMetadata['imports'],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(createFastifyAdapter(), NEST_APP_OPTIONS);
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) {
          routes.push({ method, url: route.url ?? route.path, config: route.config ?? {} });
        }
      });
    await configureApp(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  } finally {
    restore();
  }

  return {
    app,
    http: () => request(app.getHttpServer()),
    dataSource: app.get(DataSource),
    smtp,
    routes,
    settle: () => app.get(TransactionService).settled(),
    async close() {
      await app.close();
      await smtp.stop();
      if (!options.database) await database.drop();
    },
  };
}

function applyEnv(env: Record<string, string | undefined>): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    saved[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  return () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

export interface FreshDatabase {
  env: Record<string, string | undefined>;
  drop(): Promise<void>;
}

/** The base DATABASE_URL (PostgreSQL runs) stays untouched; each app gets its own database in it. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-test-'));
    return {
      env: { DATA_DIR: dir },
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `relay_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const c = new Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
