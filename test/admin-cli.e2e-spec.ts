import argon2 from 'argon2';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../src/database/data-source-options';
import { Admin } from '../src/modules/admins/entities/admin.entity';
import { parseAdminArgs, UsageError } from '../src/cli/admin-create';
import { builtFile } from './support/built';
import { freshDatabase, FreshDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const CLI = builtFile('cli/admin-create.js');
const PASSWORD = 'cli password 1234';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Node's own warnings, e.g. pg 8's DeprecationWarning about TypeORM's query queueing on
 * PostgreSQL: they come from dependencies, not from the command, and are left out of stderr.
 */
const withoutNodeWarnings = (stderr: string): string =>
  stderr
    .replace(/^\(node:\d+\) \w*Warning: .*\n/gm, '')
    .replace(/^\(Use `node --trace-[\w-]+ \.\.\.` to show where the warning was created\)\n/gm, '');

/**
 * `npm run admin:create` for real, as a child process: the compiled command of dist/ (built first
 * when a source is newer), against a database of its own. `input` is what is piped to its
 * standard input (then closed). Empty strings (rather than absent variables) keep a developer's
 * `.env` from filling them in: dotenv never overrides a variable that is set, and the config
 * reads an empty value as unset.
 */
function runCli(env: Record<string, string | undefined>, args: string[], input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          DATABASE_URL: '',
          DATA_DIR: '',
          SMTP_URL: '',
          ADMIN_EMAIL: '',
          ADMIN_PASSWORD: '',
          REDIS_URL: '',
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: withoutNodeWarnings(stderr) });
      },
    );
    child.stdin!.end(input);
  });
}

const USAGE_LINE = 'Usage: npm run admin:create -- --email <email> --role <';

/** Argument errors are found before any database work; each run here is a real process. */
const BAD_INPUT: Array<[string, string[], RegExp[]]> = [
  [
    'an unknown role',
    ['--email', 'x@example.com', '--password', PASSWORD, '--role', 'boss'],
    [/--role must be one of superAdmin, admin, accounting/],
  ],
  ['no arguments', [], [/--email is required/, /--role is required/]],
  [
    'no password on standard input',
    ['--email', 'x@example.com', '--role', 'admin'],
    [/a password is required/],
  ],
  [
    'a password of 9 characters',
    ['--email', 'x@example.com', '--password', '123456789', '--role', 'admin'],
    [/--password: must be longer than or equal to 10 characters/],
  ],
];

/** The other argument rules, checked in-process on the same parser (a process each would cost a second). */
const BAD_ARGS: Array<[string, string[], RegExp]> = [
  ['a missing e-mail', ['--password', PASSWORD, '--role', 'admin'], /^--email is required$/],
  ['a missing password', ['--email', 'x@example.com', '--role', 'admin'], /^a password is required/],
  ['a missing role', ['--email', 'x@example.com', '--password', PASSWORD], /^--role is required$/],
  [
    'a password of 129 characters',
    ['--email', 'x@example.com', '--password', 'p'.repeat(129), '--role', 'admin'],
    /^--password: must be shorter than or equal to 128 characters$/,
  ],
  [
    'an invalid e-mail',
    ['--email', 'not-an-email', '--password', PASSWORD, '--role', 'admin'],
    /^--email: must be an email$/,
  ],
  [
    'an empty name',
    ['--email', 'x@example.com', '--password', PASSWORD, '--role', 'admin', '--name', ' '],
    /^--name: should not be empty$/,
  ],
  [
    'an unknown option',
    ['--email', 'x@example.com', '--password', PASSWORD, '--role', 'admin', '--admin'],
    /Unknown option '--admin'/,
  ],
  [
    'a positional argument',
    ['--email', 'x@example.com', '--password', PASSWORD, '--role', 'admin', 'extra'],
    /positional argument/,
  ],
];

const NAMED = [
  '--email',
  'books@example.com',
  '--password',
  PASSWORD,
  '--role',
  'accounting',
  '--name',
  'Bea Keeper',
];

describe('admin:create command (child process)', () => {
  let database: FreshDatabase;
  let dataSource: DataSource;
  let run: (args: string[], input?: string) => Promise<Run>;
  let first: Run;
  let named: Run;
  let help: Run;
  let bad: Run[];

  const adminRows = () =>
    dataSource
      .getRepository(Admin)
      .createQueryBuilder('admin')
      .innerJoinAndSelect('admin.role', 'role')
      .addSelect('admin.passwordHash')
      .orderBy('admin.id')
      .getMany();

  beforeAll(async () => {
    database = await freshDatabase();
    run = (args, input) => runCli(database.env, args, input);
    // The first run creates the schema (migrations run at start), so the test connects after it.
    // The password as a script pipes it: the first line of standard input.
    first = await run(['--email', ' Root@Example.COM ', '--role', 'superAdmin'], `${PASSWORD}\nignored\n`);
    dataSource = new DataSource(
      buildDataSourceOptions({
        databaseUrl: database.env.DATABASE_URL,
        dataDir: database.env.DATA_DIR ?? '',
      }),
    );
    await dataSource.initialize();
    // The runs that cannot interfere with each other go side by side (each is a Node process).
    [named, help, ...bad] = await Promise.all([
      run(NAMED),
      run(['--help']),
      ...BAD_INPUT.map(([, args]) => run(args)),
    ]);
  }, 30000);

  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await database?.drop();
  });

  it('creates the admin, prints uuid, e-mail and role (never the password), exits 0', async () => {
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const [admin] = await adminRows();
    expect(admin).toMatchObject({
      email: 'root@example.com',
      fullName: 'Administrator',
      isActive: true,
      lastLoginAt: null,
      role: { id: 1, name: 'superAdmin' },
    });
    expect(admin.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(await argon2.verify(admin.passwordHash, PASSWORD)).toBe(true);

    expect(first.stdout).toContain(admin.uuid);
    expect(first.stdout).toContain('root@example.com');
    expect(first.stdout).toContain('superAdmin');
    expect(first.stdout).not.toContain(PASSWORD);
  });

  it('takes --name and any role', async () => {
    expect(named).toMatchObject({ code: 0, stderr: '' });
    const row = (await adminRows()).find((a) => a.email === 'books@example.com');
    expect(row).toMatchObject({
      fullName: 'Bea Keeper',
      role: { id: 3, name: 'accounting' },
      isActive: true,
    });
    expect(named.stdout).toContain(row!.uuid);
    expect(named.stdout).not.toContain(PASSWORD);
  });

  it('prints the usage on --help and exits 0', () => {
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain(USAGE_LINE);
  });

  it.each(BAD_INPUT.map(([name, , messages], i) => [name, i, messages] as const))(
    'exits 1 with the usage text on %s, and writes nothing',
    async (_case, i, messages) => {
      const res = bad[i];
      expect(res.code).toBe(1);
      for (const message of messages) expect(res.stderr).toMatch(message);
      expect(res.stderr).toContain(USAGE_LINE);
      expect(res.stderr).not.toContain(PASSWORD);
      expect(res.stdout).toBe('');
      // Only the two good runs wrote anything.
      expect((await adminRows()).map((a) => a.email)).toEqual(['root@example.com', 'books@example.com']);
    },
  );

  it('exits 1 with a clear message when the e-mail is taken, and writes nothing', async () => {
    const before = await adminRows();
    const res = await run([
      '--email',
      'ROOT@example.com',
      '--password',
      'another password 99',
      '--role',
      'admin',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Could not create the admin: Email is already used by an admin');
    expect(res.stdout).toBe('');
    expect(await adminRows()).toEqual(before);
  });

  it.each(BAD_ARGS)('refuses %s before touching the database', async (_case, args, message) => {
    const noPassword = () => Promise.resolve('');
    await expect(parseAdminArgs(args, noPassword)).rejects.toThrow(UsageError);
    await expect(parseAdminArgs(args, noPassword)).rejects.toThrow(message);
  });

  it('asks for the password only once the other arguments are valid, and checks it like --password', async () => {
    const readPassword = jest.fn(() => Promise.resolve('short'));
    await expect(
      parseAdminArgs(['--email', 'x@example.com', '--role', 'boss'], readPassword),
    ).rejects.toThrow(/^--role must be one of/);
    expect(readPassword).not.toHaveBeenCalled();
    await expect(
      parseAdminArgs(['--email', 'x@example.com', '--role', 'admin'], readPassword),
    ).rejects.toThrow(/^--password: must be longer than or equal to 10 characters$/);
    expect(readPassword).toHaveBeenCalledTimes(1);
  });

  it('normalises the e-mail and defaults the name, as the API does', async () => {
    await expect(
      parseAdminArgs(['--email', ' Mixed@Example.COM ', '--password', PASSWORD, '--role', 'admin']),
    ).resolves.toMatchObject({ email: 'mixed@example.com', fullName: 'Administrator', roleName: 'admin' });
  });
});
