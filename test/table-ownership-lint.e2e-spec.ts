import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

interface LintCase {
  file: string;
  code: string;
}

/**
 * Lints each `code` as if it were the given file of the project, with the project's own ESLint
 * config, in one child process (the ESLint config is ESM, and one instance keeps one TypeScript
 * program for all cases). Answers the messages of `ruleId` for each case.
 */
function lintAs(cases: LintCase[], ruleId = '@typescript-eslint/no-restricted-imports'): string[][] {
  const script = `
    const { ESLint } = require('eslint');
    const { cases, ruleId } = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    (async () => {
      const eslint = new ESLint({ cwd: process.cwd() });
      const out = [];
      for (const c of cases) {
        const [result] = await eslint.lintText(c.code, { filePath: c.file });
        out.push(result.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message));
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: root,
    input: JSON.stringify({ cases, ruleId }),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as string[][];
}

/** Lints every case once, before the tests of the describe it is called in: the messages of `ruleId` by case. */
function lintedBeforeAll<K extends string>(cases: Record<K, LintCase>, ruleId?: string): Record<K, string[]> {
  const errors = {} as Record<K, string[]>;
  beforeAll(() => {
    const names = Object.keys(cases) as K[];
    const results = lintAs(
      names.map((n) => cases[n]),
      ruleId,
    );
    names.forEach((n, i) => (errors[n] = results[i]));
  }, 120_000);
  return errors;
}

/** One owner per table (eslint.config.mjs): the rule refuses what it should and lets the rest through. */
describe('lint: another area’s entities and repositories', () => {
  const service = 'src/modules/companies/companies.service.ts';
  const cases = {
    entityInService: {
      file: service,
      code: "import { User } from '../users/entities/user.entity';\nexport const users = [User];\n",
    },
    entityInDto: {
      file: 'src/modules/companies/dto/company-response.dto.ts',
      code: "import { Billing } from '../../billings/entities/billing.entity';\nexport const b = Billing;\n",
    },
    repository: {
      file: 'src/modules/billings/billings.service.ts',
      code: "import { PrincipalRepository } from '../auth/principal.repository';\nexport const p = PrincipalRepository;\n",
    },
    allowed: {
      file: service,
      code: [
        "import { Company } from './entities/company.entity';",
        "import type { User } from '../users/entities/user.entity';",
        "import { BILLING_STATUSES, type Billing } from '../billings/entities/billing.entity';",
        'export const c = [Company, BILLING_STATUSES];',
        'export type T = User | Billing;',
        '',
      ].join('\n'),
    },
    entityOutsideTheAreas: {
      file: 'src/relay-agent/sasl/relay-authenticator.ts',
      code: "import { Company } from '../../modules/companies/entities/company.entity';\nexport const c = Company;\n",
    },
    ownEntityFromSubfolder: {
      file: 'src/modules/delivery/parsing/queue-facts.ts',
      code: "import { PostfixQueue } from '../entities/postfix-queue.entity';\nexport const q = PostfixQueue;\n",
    },
    entityFile: {
      file: 'src/modules/users/entities/user.entity.ts',
      code: "import { Company } from '../../companies/entities/company.entity';\nexport const c = Company;\n",
    },
  } satisfies Record<string, LintCase>;
  const errors = lintedBeforeAll(cases);

  it('refuses a value import of another area’s entity in a service', () => {
    expect(errors.entityInService).toEqual([
      expect.stringContaining("'User' import from '../users/entities/user.entity' is restricted"),
    ]);
  });

  it('refuses one from a DTO two folders down, and another area’s repository', () => {
    expect(errors.entityInDto).toHaveLength(1);
    expect(errors.repository).toHaveLength(1);
  });

  it('refuses one from outside the areas (the relay agent)', () => {
    expect(errors.entityOutsideTheAreas).toEqual([
      expect.stringContaining(
        "'Company' import from '../../modules/companies/entities/company.entity' is restricted",
      ),
    ]);
  });

  it('lets through the area’s own entities (from a subfolder too), type imports and CONSTANT_CASE values', () => {
    expect(errors.allowed).toEqual([]);
    expect(errors.ownEntityFromSubfolder).toEqual([]);
  });

  it('does not apply to entity files, which relate to each other', () => {
    expect(errors.entityFile).toEqual([]);
  });
});

/** Who sent a message is decided in src/modules/attribution alone (eslint.config.mjs). */
describe('lint: one attribution rule', () => {
  const cases = {
    ownerLookupElsewhere: {
      file: 'src/modules/delivery/delivery-records.service.ts',
      code: 'export const f = (d: { verifiedDomainOwner(n: string): unknown }) => d.verifiedDomainOwner("a.test");\n',
    },
    usernameLookupElsewhere: {
      file: 'src/modules/spam-reports/spam-reports.service.ts',
      code: 'export const f = (c: { byRelayUsername(n: string): unknown }) => c.byRelayUsername("r-x");\n',
    },
    ownIdnaElsewhere: {
      file: 'src/modules/delivery/parsing/provider-payloads.ts',
      code: "import { domainToASCII } from 'node:url';\nexport const d = domainToASCII('b\u00fccher.de');\n",
    },
    inAttribution: {
      file: 'src/modules/attribution/company-attribution.service.ts',
      code: 'export const f = (d: { verifiedDomainOwner(n: string): unknown }) => d.verifiedDomainOwner("a.test");\n',
    },
  } satisfies Record<string, LintCase>;
  const errors = lintedBeforeAll(cases, 'no-restricted-syntax');

  it('refuses a domain-owner or relay-username lookup, or IDNA of its own, outside the attribution area', () => {
    expect(errors.ownerLookupElsewhere).toEqual([expect.stringContaining('CompanyAttribution')]);
    expect(errors.usernameLookupElsewhere).toEqual([expect.stringContaining('CompanyAttribution')]);
    expect(errors.ownIdnaElsewhere).toEqual([expect.stringContaining('senderDomainOf')]);
  });

  it('lets the attribution area do it', () => {
    expect(errors.inAttribution).toEqual([]);
  });
});

/** Transactions are begun by TransactionService.run alone (eslint.config.mjs). */
describe('lint: transactions through the helper', () => {
  const cases = {
    dataSourceTransaction: {
      file: 'src/modules/packages/packages.service.ts',
      code: "import type { DataSource } from 'typeorm';\nexport const f = (d: DataSource) => d.transaction(() => Promise.resolve());\n",
    },
    byHand: {
      file: 'src/modules/delivery/delivery-records.service.ts',
      code: "import type { DataSource } from 'typeorm';\nexport const f = async (d: DataSource) => d.createQueryRunner().startTransaction();\n",
    },
    inAttribution: {
      file: 'src/modules/attribution/company-attribution.service.ts',
      code: "import type { EntityManager } from 'typeorm';\nexport const f = (m: EntityManager) => m.transaction(() => Promise.resolve());\n",
    },
    inDatabase: {
      file: 'src/database/transaction.service.ts',
      code: "import type { DataSource } from 'typeorm';\nexport const f = (d: DataSource) => d.transaction(() => Promise.resolve());\n",
    },
  } satisfies Record<string, LintCase>;
  const errors = lintedBeforeAll(cases, 'no-restricted-syntax');

  it('refuses a transaction begun outside src/database, by a data source, a manager or a query runner', () => {
    const refusal = expect.stringContaining('Transactions go through TransactionService.run');
    expect(errors.dataSourceTransaction).toEqual([refusal]);
    expect(errors.byHand).toEqual([refusal, refusal]);
    expect(errors.inAttribution).toEqual([refusal]);
  });

  it('lets src/database begin them', () => {
    expect(errors.inDatabase).toEqual([]);
  });
});
