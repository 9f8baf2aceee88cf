// The installed packages that `require` loads as ES modules (NestJS 12 among them): Node's own
// resolution of the package for `require` lands on a `.mjs` file, or a `.js` file under a
// package.json of "type": "module". Jest loads CommonJS, and requires an ES module natively
// only on Node 24.9 and later; so on every Node line the tests run, these are compiled to
// CommonJS like our own sources (jest-transformer.js), as Node's require(esm) loads them for the
// built service.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

/** The "type" of the package.json nearest to `file`. */
function typeOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).type ?? 'commonjs';
  }
  return 'commonjs';
}

function requiresAsModule(name, root) {
  let entry;
  try {
    entry = require.resolve(name, { paths: [root] });
  } catch {
    return false; // no entry for `require` (subpaths only, or not a library)
  }
  if (entry.endsWith('.mjs')) return true;
  return entry.endsWith('.js') && typeOf(entry) === 'module';
}

/** Names of the packages under `root`/node_modules that `require` loads as ES modules. */
function esmOnlyPackages(root) {
  const nodeModules = join(root, 'node_modules');
  const names = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const packages = entry.startsWith('@')
      ? readdirSync(join(nodeModules, entry)).map((scoped) => `${entry}/${scoped}`)
      : [entry];
    names.push(...packages.filter((name) => requiresAsModule(name, root)));
  }
  return names;
}

module.exports = { esmOnlyPackages };
