// `npm start`, `npm run relay-agent`, `npm run policy-server` and `npm run admin:create` run the
// compiled files in dist/, which `npm install` / `npm ci` build once (the `prepare` script): nothing
// is compiled at start. Without them, one line saying what to do rather than Node's stack trace.
// Usage (a package.json pre-script): node scripts/require-build.cjs dist/main.js
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');

const file = process.argv[2];
if (!file || !existsSync(resolve(__dirname, '..', file))) {
  console.error(`${file ?? 'dist/'} is missing: run \`npm run build\` (npm install and npm ci run it once).`);
  process.exit(1);
}
