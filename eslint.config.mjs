// typescript-eslint, type-aware, with prettier; CI runs it with --max-warnings 0.
import eslint from '@eslint/js';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import tseslint from 'typescript-eslint';

/** A transaction begun outside src/database/ (see the rule's block below). */
const TRANSACTIONS_THROUGH_THE_HELPER = [
  {
    selector:
      'CallExpression > MemberExpression.callee > Identifier.property[name=/^(transaction|createQueryRunner|startTransaction)$/]',
    message:
      'Transactions go through TransactionService.run: on SQLite it keeps them to themselves on the shared connection.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'eslint.config.mjs',
      'jest.config.js',
      'test/support/swagger-transformer.js',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettierRecommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      // One owner per table: an area reaches another area's rows through that area's exported
      // service, never through its entity classes or repositories. Types and CONSTANT_CASE
      // values (status lists) may still be imported.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              importNames: ['IsOptional'],
              message:
                'IsOptional lets null through to the database: use Omittable() or Nullable() from src/common/validation/presence.ts.',
            },
          ],
          patterns: [
            {
              // `../x/entities/…` from an area, `../../modules/x/entities/…` from outside the areas too.
              regex: '^(\\.\\./)+([a-z-]+/)?[a-z-]+/(entities/|[a-z-]+\\.repository$)',
              importNamePattern: '^(?![A-Z][A-Z0-9_]*$)',
              allowTypeImports: true,
              message:
                "Another area's entities and repositories are its own: call the owning area's exported service (import type is fine).",
            },
          ],
        },
      ],
    },
  },
  {
    // Every transaction goes through TransactionService.run (src/database/): on SQLite it keeps
    // the transaction to itself on the one shared connection (SqliteTransactionGate), and a
    // transaction begun elsewhere would let other requests' statements into it.
    files: ['src/**/*.ts'],
    ignores: ['src/database/**', '**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TRANSACTIONS_THROUGH_THE_HELPER] },
  },
  {
    // Who sent a message is decided in one place (src/modules/attribution, integrations.md "Who
    // sent it"): nothing else looks a company up by relay username, client address or sender
    // domain, and nothing else normalises domains its own way.
    files: ['src/**/*.ts'],
    ignores: [
      'src/modules/attribution/**',
      'src/modules/domains/domain-name.ts',
      'src/database/**',
      '**/*.spec.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...TRANSACTIONS_THROUGH_THE_HELPER,
        {
          selector:
            'CallExpression > MemberExpression.callee > Identifier.property[name=/^(verifiedDomainOwner|byRelayUsername|withAllowedIps|companiesHolding)$/]',
          message: 'Who sent a message is decided by CompanyAttribution (src/modules/attribution) alone.',
        },
        {
          selector:
            "ImportDeclaration[source.value=/^(node:)?url$/] > ImportSpecifier[imported.name='domainToASCII']",
          message:
            'Domains are normalised by normaliseDomainName (stored domains) or senderDomainOf (senders) alone.',
        },
      ],
    },
  },
  {
    // The one place that wraps IsOptional, and the environment schema (no JSON nulls there).
    files: ['src/common/validation/presence.ts', 'src/config/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    // Entities relate to each other; the principal lookup, the credential subjects and the API key
    // lookup read the users, admins and api_keys tables for auth by design (see their comments);
    // tests and benches build fixtures.
    files: [
      'src/modules/*/entities/**/*.ts',
      'src/database/**/*.ts',
      'src/modules/auth/principal.repository.ts',
      'src/modules/auth/credential-subjects.ts',
      'src/modules/auth/api-key-authenticator.ts',
      // The admin command composes the admins area's own pieces into a context smaller than AppModule.
      'src/cli/admin-create.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      '**/*.spec.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              importNames: ['IsOptional'],
              message: 'Use Omittable() or Nullable().',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read supertest's untyped bodies; the unsafe-any rules add noise there, not safety.
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
