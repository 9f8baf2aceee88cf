/**
 * npm run lint:openapi: builds the OpenAPI document exactly as production serves it at
 * /api-docs-json, validates it with swagger-parser, then lints it with Spectral (the ruleset
 * in .spectral.yaml) and fails on any error or warning.
 *
 * "Exactly as production": src/ is compiled the way `nest build` compiles it (the tsconfig of
 * nest-cli.json, with the @nestjs/swagger plugin and the options nest-cli.json gives it), into a
 * temporary directory so dist/ is left alone. The real AppModule then boots through
 * configureApp on the embedded SQLite database in a temporary DATA_DIR, with generated secrets
 * and no outside system configured, and the document is read from /api-docs-json.
 *
 * Usage: npm run lint:openapi [-- --out openapi.json]   (--out keeps a copy of the document)
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type * as SwaggerPlugin from '@nestjs/swagger/dist/plugin';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..');

// The plugin `nest build` runs. Its types sit in dist/ (this tsconfig's module resolution does
// not read package.json "exports"); at run time only the exported subpath may be loaded.
const swaggerPlugin = (createRequire(__filename)('@nestjs/swagger/plugin') as typeof SwaggerPlugin).before;

interface NestCliConfig {
  sourceRoot?: string;
  compilerOptions?: {
    tsConfigPath?: string;
    plugins?: Array<string | { name: string; options?: Record<string, unknown> }>;
  };
}

/** Compiles src/ as `nest build` does (same tsconfig, same swagger plugin options) into `outDir`. */
function compile(outDir: string): void {
  const cli = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as NestCliConfig;
  const plugin = cli.compilerOptions?.plugins?.find(
    (p) => (typeof p === 'string' ? p : p.name) === '@nestjs/swagger',
  );
  if (!plugin) throw new Error('nest-cli.json does not list the @nestjs/swagger plugin');
  const pluginOptions = typeof plugin === 'string' ? {} : (plugin.options ?? {});

  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, cli.compilerOptions?.tsConfigPath ?? 'tsconfig.json'),
    {
      outDir,
      rootDir: join(ROOT, cli.sourceRoot ?? 'src'),
      noEmit: false,
      incremental: false,
      sourceMap: false,
      declaration: false,
    },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('Cannot read the tsconfig of nest-cli.json');
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
  });
  // Type errors are `npm run typecheck`'s business; the emitted JavaScript is what matters here.
  const result = program.emit(undefined, undefined, undefined, false, {
    before: [swaggerPlugin(pluginOptions, program)],
  });
  if (result.emitSkipped) throw new Error('TypeScript emitted nothing');
}

/** The environment of a throwaway instance: embedded database, generated secrets, nothing outside. */
function isolateEnvironment(dataDir: string): void {
  const keep = new Set(['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'TZ', 'SystemRoot']);
  for (const key of Object.keys(process.env)) if (!keep.has(key)) delete process.env[key];
  Object.assign(process.env, { NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: dataDir });
}

/** Boots the compiled AppModule through configureApp and reads the document it serves. */
async function fetchDocument(buildDir: string): Promise<string> {
  const { AppModule } = (await import(join(buildDir, 'app.module.js'))) as { AppModule: Type<unknown> };
  const { configureApp, createFastifyAdapter, NEST_APP_OPTIONS } = (await import(
    join(buildDir, 'configure-app.js')
  )) as typeof import('../src/configure-app');
  const app: NestFastifyApplication = await NestFactory.create<NestFastifyApplication>(
    AppModule,
    createFastifyAdapter(),
    NEST_APP_OPTIONS,
  );
  try {
    await configureApp(app);
    await app.init();
    const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api-docs-json' });
    if (res.statusCode !== 200) throw new Error(`GET /api-docs-json answered ${res.statusCode}`);
    return res.body;
  } finally {
    await app.close();
  }
}

/** swagger-parser's validation (the OpenAPI schema, then $refs and the rules the schema cannot say). */
async function validate(documentPath: string): Promise<boolean> {
  try {
    await SwaggerParser.validate(documentPath);
    console.log('swagger-parser: valid OpenAPI document');
    return true;
  } catch (error) {
    // The message has one line per schema violation, often hundreds: the first ones say enough.
    const lines = (error instanceof Error ? error.message : String(error)).split('\n');
    const shown = lines.slice(0, 40);
    console.error(`swagger-parser: INVALID\n${shown.join('\n')}`);
    if (lines.length > shown.length) console.error(`  … and ${lines.length - shown.length} more lines`);
    return false;
  }
}

function spectral(documentPath: string, reportPath: string): number {
  const cliPackage = require.resolve('@stoplight/spectral-cli/package.json');
  const { bin } = JSON.parse(readFileSync(cliPackage, 'utf8')) as { bin: { spectral: string } };
  const run = spawnSync(
    process.execPath,
    [
      join(dirname(cliPackage), bin.spectral),
      'lint',
      documentPath,
      '--ruleset',
      join(ROOT, '.spectral.yaml'),
      '--fail-severity=warn',
      '--format=stylish',
      '--format=json',
      `--output.json=${reportPath}`,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  return run.status ?? 1;
}

async function main(): Promise<number> {
  const outArg = process.argv.indexOf('--out');
  const keepAt = outArg > 0 ? resolve(process.argv[outArg + 1] ?? 'openapi.json') : undefined;
  const work = mkdtempSync(join(tmpdir(), 'relay-openapi-'));
  // Inside the project, so the compiled code resolves the project's node_modules.
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const buildDir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'lint-openapi-'));
  try {
    compile(buildDir);
    isolateEnvironment(join(work, 'data'));
    const documentPath = join(work, 'openapi.json');
    writeFileSync(documentPath, await fetchDocument(buildDir));
    if (keepAt) copyFileSync(documentPath, keepAt);

    const valid = await validate(documentPath);

    const reportPath = join(work, 'spectral.json');
    const status = spectral(documentPath, reportPath);
    const results = JSON.parse(readFileSync(reportPath, 'utf8')) as Array<{ severity: number }>;
    const count = (severity: number) => results.filter((r) => r.severity === severity).length;
    console.log(
      `spectral (.spectral.yaml, fail severity warn): ${count(0)} errors, ${count(1)} warnings, ` +
        `${count(2)} infos, ${count(3)} hints`,
    );
    return valid && status === 0 ? 0 : 1;
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
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
