// Unit specs beside the code (src/ ... .spec.ts) and e2e specs in test/ (.e2e-spec.ts).
// TypeScript is compiled without type-checking (test/support/jest-transformer.js says how).
const { availableParallelism } = require('node:os');
const { esmOnlyPackages } = require('./test/support/esm-only-packages');

const escaped = esmOnlyPackages(__dirname).map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));

module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testRegex: '(src/.*\\.spec|test/.*\\.e2e-spec)\\.ts$',
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': '<rootDir>/test/support/jest-transformer.js',
    '/node_modules/.+\\.m?js$': '<rootDir>/test/support/jest-transformer.js',
  },
  // Every package but the ES-module-only ones (esm-only-packages.js) is loaded as it is.
  transformIgnorePatterns: [`/node_modules/(?!(${escaped.join('|')})/)`],
  setupFiles: ['<rootDir>/test/support/jest-setup.ts'],
  // Each e2e file owns its databases, ports and folders, so files run side by side; most of a
  // test's time is spent waiting on sockets, so two workers even on a one- or two-core machine.
  maxWorkers: Math.max(2, availableParallelism()),
  testTimeout: 30000,
};
