// Unit specs beside the code (src/ ... .spec.ts) and e2e specs in test/ (.e2e-spec.ts).
module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testRegex: '(src/.*\\.spec|test/.*\\.e2e-spec)\\.ts$',
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: 'tsconfig.json',
        // The same @nestjs/swagger plugin as nest-cli.json, so the OpenAPI document under test is the real one.
        astTransformers: { before: ['<rootDir>/test/support/swagger-transformer.js'] },
        diagnostics: { warnOnly: false },
      },
    ],
  },
  setupFiles: ['<rootDir>/test/support/jest-setup.ts'],
  testTimeout: 30000,
};
