// How the tests compile TypeScript, file by file and without type-checking (that is
// `npm run typecheck`, once per change, not once per test run):
//
// - SWC (@swc/jest) for almost every file, with the semantics of tsconfig.json: legacy decorators
//   with their metadata, ES2022 class fields, CommonJS.
// - The ES-module-only packages of node_modules (esm-only-packages.js) by SWC to CommonJS too.
// - The files the @nestjs/swagger compiler plugin rewrites (nest-cli.json's DTO suffixes and
//   controllers) by TypeScript itself with that plugin, as `nest build` does, so the OpenAPI
//   document under test is the one production serves. The plugin reads types across files, so
//   one program of the sources is made per worker, the first time such a file is compiled (and
//   the cache key of those files changes with any source).
const { createHash } = require('node:crypto');
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { createTransformer } = require('@swc/jest');
const ts = require('typescript');
const swaggerPlugin = require('@nestjs/swagger/plugin');

const ROOT = join(__dirname, '..', '..');
const nestCli = require('../../nest-cli.json');
const plugin = nestCli.compilerOptions.plugins.find((p) => (typeof p === 'string' ? p : p.name) === '@nestjs/swagger');
if (!plugin) throw new Error('nest-cli.json does not list the @nestjs/swagger plugin');
const pluginOptions = typeof plugin === 'string' ? {} : (plugin.options ?? {});
const pluginSuffixes = [...(pluginOptions.dtoFileNameSuffix ?? ['.dto.ts', '.entity.ts']), ...(pluginOptions.controllerFileNameSuffix ?? ['.controller.ts'])];

const swc = createTransformer({
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
});

/** For JavaScript of node_modules: ES module syntax to CommonJS (`import.meta.url` included). */
const swcModules = createTransformer({
  jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022', keepClassNames: true },
  module: { type: 'commonjs' },
  sourceMaps: false,
});

const rewrittenByPlugin = (path) => path.startsWith(join(ROOT, 'src')) && pluginSuffixes.some((suffix) => path.endsWith(suffix));

let sourcesVersion;
/** Changes with any file of src/: what the plugin writes into one file depends on the types of others. */
function versionOfSources() {
  if (sourcesVersion === undefined) {
    const hash = createHash('sha1');
    for (const entry of readdirSync(join(ROOT, 'src'), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      hash.update(`${file}\0${statSync(file).mtimeMs}\0`);
    }
    sourcesVersion = hash.digest('hex');
  }
  return sourcesVersion;
}

let program;
/** One program of the files the plugin rewrites (and what they import), made once per worker. */
function pluginProgram() {
  if (!program) {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), undefined, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    });
    program = ts.createProgram({
      rootNames: parsed.fileNames.filter(rewrittenByPlugin),
      options: { ...parsed.options, incremental: false, sourceMap: false, inlineSourceMap: true, inlineSources: true, declaration: false, noEmit: false },
    });
  }
  return program;
}

module.exports = {
  process(source, path, options) {
    if (!path.endsWith('.ts')) return swcModules.process(source, path, options);
    if (!rewrittenByPlugin(path)) return swc.process(source, path, options);
    const program = pluginProgram();
    const file = program.getSourceFile(path);
    if (!file) throw new Error(`${path} is not in the program of tsconfig.json`);
    let code;
    program.emit(file, (name, text) => {
      if (name.endsWith('.js')) code = text;
    }, undefined, false, { before: [swaggerPlugin.before(pluginOptions, program)] });
    if (code === undefined) throw new Error(`TypeScript emitted nothing for ${path}`);
    return { code };
  },
  getCacheKey(source, path, options) {
    if (!path.endsWith('.ts')) return swcModules.getCacheKey(source, path, options);
    const hash = createHash('sha1').update(swc.getCacheKey(source, path, options));
    if (rewrittenByPlugin(path)) hash.update(`\0plugin\0${JSON.stringify(pluginOptions)}\0${versionOfSources()}\0${ts.version}`);
    return hash.digest('hex');
  },
};
