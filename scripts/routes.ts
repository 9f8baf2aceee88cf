/**
 * npm run routes: writes ROUTES.md, every route of the router with its method, full path,
 * access rule and the handler's file:line. npm run routes:check (CI) fails when ROUTES.md is not
 * what this script would write.
 *
 * The routes come from the running router, as test/route-walker sees it: the real AppModule
 * boots through configureApp on the embedded SQLite database in a temporary DATA_DIR, with
 * nothing outside configured, and Fastify reports each route it registers. Each one is matched
 * to the Nest handler that declares it (controller and method metadata), whose access rule is
 * what the global AccessGuard reads (handler first, then class) and whose extra guards
 * (@CompanyScoped, @OwnedResource) narrow it. A route Fastify holds that no handler declares, or
 * the reverse (a global prefix, a RouterModule this script does not know), stops the script
 * rather than writing a wrong table.
 *
 * It also refuses an admin route declared outside an `*-admin.controller.ts` (the admins area's
 * own controller excepted), so ROUTES.md groups by file the way STYLE.md lays areas out.
 *
 * The handler's file is the module that exports the controller class (require.cache); its line
 * is the line of the method's name in that class (TypeScript's parser). The output has no
 * timestamp: the same code writes the same file.
 *
 * Usage: npm run routes            (writes ROUTES.md)
 *        npm run routes:check      (exit 1 and a diff summary when ROUTES.md is stale)
 */
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { RequestMethod, Type } from '@nestjs/common';
import { MetadataScanner, ModulesContainer, NestFactory } from '@nestjs/core';
import { PathsExplorer } from '@nestjs/core/router/paths-explorer';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import {
  ACCESS_RULE,
  KEY_SCOPES_FOR,
  type AccessRule,
  type MachineCredential,
} from '../src/modules/auth/access';

const ROOT = resolve(__dirname, '..');
const OUTPUT = join(ROOT, 'ROUTES.md');

interface Route {
  method: string;
  path: string;
  access: string;
  handler: string;
  source: string;
}

/** The environment of a throwaway instance: embedded database, generated secrets, nothing outside. */
function isolateEnvironment(dataDir: string): void {
  const keep = new Set(['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'TZ', 'SystemRoot']);
  for (const key of Object.keys(process.env)) if (!keep.has(key)) delete process.env[key];
  Object.assign(process.env, { NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: dataDir });
}

const MACHINE: Record<MachineCredential, string> = {
  'api-key': 'API key (`x-api-key`, INTERNAL_API_KEY)',
  'log-shipper-key': 'API key (`x-api-key`, LOG_SHIPPER_API_KEY)',
  'callback-token': 'callback token (`x-callback-token`, PAYMENT_CALLBACK_TOKEN)',
  basic: 'webhook basic auth (MAIL_PROVIDER_WEBHOOK_USER/PASSWORD)',
};

function describeRule(rule: AccessRule | undefined): string {
  if (!rule) return '**none (refused: 403)**';
  switch (rule.kind) {
    case 'public':
      return 'public';
    case 'refresh-token':
      return 'refresh token (read by the handler)';
    case 'user': {
      const who = rule.ownerOnly ? 'user, company owner' : 'user';
      return rule.key ? `${who}; customer API key: ${KEY_SCOPES_FOR[rule.key].join(', ')}` : who;
    }
    case 'admin':
      return `admin: ${rule.roles.join(', ')}`;
    case 'machine':
      return MACHINE[rule.credential];
  }
}

/** The guards a route adds after its access rule (@CompanyScoped, @OwnedResource). */
function describeGuard(guard: unknown): string {
  if (typeof guard !== 'function') return 'guard instance';
  const source = Function.prototype.toString.call(guard);
  if (guard.name === 'CompanyOwnershipGuard') return 'own company (`:companyUuid`)';
  // OwnedResourceGuard(...) is a Nest mixin: its name is random, its class body is not.
  if (source.startsWith('class ResourceOwnershipGuard')) return 'owned resource';
  return guard.name;
}

function accessOf(controller: Type<unknown>, handler: object): string {
  const rule = (Reflect.getMetadata(ACCESS_RULE, handler) ?? Reflect.getMetadata(ACCESS_RULE, controller)) as
    AccessRule | undefined;
  const guards = [
    ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? []),
  ];
  return [describeRule(rule), ...guards.map(describeGuard)].join(' + ');
}

/** The source file that declares and exports `cls`, from the modules Node has loaded (a re-export does not count). */
function fileOf(cls: Type<unknown>): string {
  const files = Object.values(require.cache)
    .filter((m): m is NodeModule => !!m && typeof m.exports === 'object' && m.exports !== null)
    .filter((m) => Object.values(m.exports as Record<string, unknown>).includes(cls))
    .map((m) => m.filename)
    .filter((f) => !f.includes(`${join('node_modules', '')}`) && methodLines(f).has(cls.name));
  const unique = [...new Set(files)];
  if (unique.length !== 1) throw new Error(`${cls.name} is declared by ${unique.length} loaded files`);
  return unique[0];
}

const lineCache = new Map<string, Map<string, number>>();

/** 1-based line of `Class.method`'s name in `file`. */
function lineOf(file: string, className: string, methodName: string): number {
  const line = methodLines(file).get(`${className}.${methodName}`);
  if (line === undefined) throw new Error(`No method ${className}.${methodName} in ${file}`);
  return line;
}

/** `Class.method` → line of every class method of `file`, and `Class` → line of each class. */
function methodLines(file: string): Map<string, number> {
  let lines = lineCache.get(file);
  if (!lines) {
    lines = new Map();
    const text = readFileSync(file, 'utf8');
    const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    for (const statement of sourceFile.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name) continue;
      const at = sourceFile.getLineAndCharacterOfPosition(statement.name.getStart(sourceFile));
      lines.set(statement.name.text, at.line + 1);
      for (const member of statement.members) {
        if (!ts.isMethodDeclaration(member) || !member.name) continue;
        const name = member.name.getText(sourceFile);
        const { line } = sourceFile.getLineAndCharacterOfPosition(member.name.getStart(sourceFile));
        lines.set(`${statement.name.text}.${name}`, line + 1);
      }
    }
    lineCache.set(file, lines);
  }
  return lines;
}

function joinPath(...parts: string[]): string {
  const joined = parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}

/** The routes Nest declares, from the controllers of every module of the booted app. */
function declaredRoutes(app: NestFastifyApplication): Route[] {
  const explorer = new PathsExplorer(new MetadataScanner());
  const controllers = new Set<Type<unknown>>();
  const routes: Route[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type<unknown>;
      if (controllers.has(controller)) continue;
      controllers.add(controller);
      const file = fileOf(controller);
      const prefixes = [
        (Reflect.getMetadata('path', controller) as string | string[] | undefined) ?? '/',
      ].flat();
      for (const definition of explorer.scanForPaths(wrapper.instance)) {
        const handler = (controller.prototype as Record<string, object>)[definition.methodName];
        const method = RequestMethod[definition.requestMethod];
        for (const prefix of prefixes)
          for (const path of definition.path)
            routes.push({
              method,
              path: joinPath(prefix, path),
              access: accessOf(controller, handler),
              handler: `${controller.name}.${definition.methodName}`,
              source: `${relative(ROOT, file)}:${lineOf(file, controller.name, definition.methodName)}`,
            });
      }
    }
  }
  return routes;
}

/** Boots the app as the tests do and returns its routes, checked against what Fastify registered. */
async function collectRoutes(): Promise<Route[]> {
  const { AppModule } = await import('../src/app.module');
  const { configureApp, createFastifyAdapter, NEST_APP_OPTIONS } = await import('../src/configure-app');
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, createFastifyAdapter(), {
    ...NEST_APP_OPTIONS,
    abortOnError: false,
  });
  const registered: string[] = [];
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) registered.push(`${method} ${route.url ?? route.path}`);
    });
  try {
    await configureApp(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    const routes = declaredRoutes(app);

    // The same set as the router, minus Fastify's HEAD/OPTIONS twins and the Swagger UI.
    const router = new Set(
      registered.filter(
        (r) => !/^(HEAD|OPTIONS) /.test(r) && !/^[A-Z]+ \/api-docs(\/|-json$|-yaml$|$)/.test(r),
      ),
    );
    const declared = new Set(routes.map((r) => `${r.method} ${r.path}`));
    const onlyRouter = [...router].filter((r) => !declared.has(r));
    const onlyDeclared = [...declared].filter((r) => !router.has(r));
    if (onlyRouter.length || onlyDeclared.length || declared.size !== routes.length)
      throw new Error(
        'The router and the controllers disagree: ' +
          JSON.stringify({ onlyRouter, onlyDeclared, duplicates: routes.length - declared.size }),
      );
    return routes;
  } finally {
    await app.close();
  }
}

/**
 * The admins area's own controller: admin login and the admin accounts, under /api/v1/admins.
 * Every other admin route lives in its area's `*-admin.controller.ts` (STYLE.md, "Layout").
 */
const ADMIN_ROUTES_OUTSIDE_ADMIN_CONTROLLERS = ['src/modules/admins/admins.controller.ts'];

/** Admin routes declared outside an `*-admin.controller.ts`. */
function misplacedAdminRoutes(routes: Route[]): string[] {
  return routes
    .filter((r) => r.access.startsWith('admin:'))
    .filter((r) => {
      const file = r.source.replace(/:\d+$/, '');
      return !file.endsWith('-admin.controller.ts') && !ADMIN_ROUTES_OUTSIDE_ADMIN_CONTROLLERS.includes(file);
    })
    .map((r) => `${r.method} ${r.path} (${r.handler}, ${r.source})`);
}

/** By code unit, not by locale: the same order on every machine. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function render(routes: Route[]): string {
  const sorted = [...routes].sort((a, b) =>
    a.path === b.path ? compare(a.method, b.method) : compare(a.path, b.path),
  );
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const byKind = new Map<string, number>();
  for (const r of routes) {
    const kind = r.access.split(/[:+(]/)[0].trim();
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
  }
  const counts = [...byKind.entries()]
    .sort(([a], [b]) => compare(a, b))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  return [
    '# Routes',
    '',
    'Generated by `npm run routes` (scripts/routes.ts) from the router of the booted app; do not',
    'edit by hand. CI runs `npm run routes:check`, which fails while this file is stale. The URLs',
    'are the contract of [docs/contract/endpoints.md](docs/contract/endpoints.md).',
    '',
    'Access is the rule the global access guard reads ([auth.md](docs/contract/auth.md)): `public`,',
    '`user` (any active user of a company; `company owner` for owners only), `admin: <roles>` (the',
    'stored admin role), a machine credential, or the refresh token the handler verifies;',
    '`customer API key: <scopes>` names the scopes of the API keys that may call it too',
    '([platform.md](docs/contract/platform.md) "Using a key"); `+` adds',
    "the guards of `@CompanyScoped()` (the path names the caller's company) and `@OwnedResource()`",
    '(the caller owns `:uuid`).',
    '',
    `${routes.length} routes: ${counts}.`,
    '',
    '| Method | Path | Access | Handler | Source |',
    '| --- | --- | --- | --- | --- |',
    ...sorted.map(
      (r) => `| ${r.method} | \`${r.path}\` | ${cell(r.access)} | \`${r.handler}\` | ${r.source} |`,
    ),
    '',
  ].join('\n');
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const work = mkdtempSync(join(tmpdir(), 'relay-routes-'));
  try {
    isolateEnvironment(join(work, 'data'));
    const routes = await collectRoutes();
    const misplaced = misplacedAdminRoutes(routes);
    if (misplaced.length) {
      console.error(`Admin routes outside an *-admin.controller.ts:\n  ${misplaced.join('\n  ')}`);
      return 1;
    }
    const text = render(routes);
    if (!check) {
      writeFileSync(OUTPUT, text);
      console.log(`ROUTES.md: ${text.split('\n').filter((l) => /^\| [A-Z]+ \|/.test(l)).length} routes`);
      return 0;
    }
    const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, 'utf8') : '';
    if (current === text) {
      console.log('ROUTES.md is up to date');
      return 0;
    }
    const want = new Set(text.split('\n'));
    const have = new Set(current.split('\n'));
    console.error('ROUTES.md is stale: run `npm run routes` and commit the result.');
    for (const line of current.split('\n')) if (!want.has(line)) console.error(`- ${line}`);
    for (const line of text.split('\n')) if (!have.has(line)) console.error(`+ ${line}`);
    return 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
