import 'dotenv/config';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validate, ValidatorOptions } from 'class-validator';
import { parseArgs } from 'node:util';
import { DomainError } from '../common/errors/domain-error';
import { ConfigurationError } from '../config/app-config';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { AdminsService } from '../modules/admins/admins.service';
import { CreateAdminDto } from '../modules/admins/dto/admin-requests.dto';
import { AdminRole, ADMIN_ROLE_NAMES } from '../modules/admins/entities/admin-role.entity';
import { Admin } from '../modules/admins/entities/admin.entity';
import { AuthModule } from '../modules/auth/auth.module';
import { JobRegistryModule } from '../modules/jobs/job-registry.module';
import { MailModule } from '../modules/mail/mail.module';

/**
 * `npm run admin:create -- --email a@b.c --role superAdmin [--name "Full Name"]`, the password
 * asked for on the terminal or piped in (`--password` works too, but npm and the shell show it).
 *
 * Creates one admin through AdminsService.create (the same rules and hashing as
 * `POST /api/v1/admins`). The context is smaller than AppModule on purpose: no HTTP logger,
 * no scheduled jobs, no rate limiter, and no first-admin bootstrap from ADMIN_EMAIL (that
 * belongs to the service's start, not to this command). Migrations run as at start, so a
 * fresh database works.
 */
@Module({
  imports: [
    AppConfigModule,
    DatabaseModule,
    MailModule,
    JobRegistryModule,
    AuthModule,
    TypeOrmModule.forFeature([Admin, AdminRole]),
  ],
  providers: [AdminsService],
})
class AdminCliModule {}

export const USAGE = `Usage: npm run admin:create -- --email <email> --role <${ADMIN_ROLE_NAMES.join('|')}> [--name "Full Name"]

  --email     the admin's e-mail address (stored trimmed and lower-cased)
  --role      one of ${ADMIN_ROLE_NAMES.join(', ')}
  --name      full name (default "Administrator")

  The password (10 to 128 characters) is asked for on a terminal, without echo, or read as the
  first line of standard input (e.g. printf '%s\\n' "$PASSWORD" | npm run admin:create -- ...).
  --password <password> also works, but leaves it in the shell's history and the process list.`;

/** Bad arguments: the message lists every problem; the usage text goes with it. */
export class UsageError extends Error {}
class HelpRequested extends Error {}

/** Where the password comes from when --password is not given (standard input, by default). */
export type ReadPassword = () => Promise<string>;

/**
 * Parses and validates the arguments with the same DTO as the API; throws UsageError with every
 * problem. The password is asked for only once the other arguments are valid.
 */
export async function parseAdminArgs(
  argv: string[],
  readPassword: ReadPassword = readPasswordFromStdin,
): Promise<CreateAdminDto> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  if (values.help) throw new HelpRequested();

  const problems: string[] = [];
  for (const required of ['email', 'role'] as const) {
    if (values[required] === undefined) problems.push(`--${required} is required`);
  }
  if (problems.length) throw new UsageError(problems.join('\n'));

  const dto = plainToInstance(CreateAdminDto, {
    email: values.email,
    password: values.password,
    roleName: values.role,
    fullName: typeof values.name === 'string' ? values.name.trim() : 'Administrator',
  });
  problems.push(...(await argumentProblems(dto, { skipMissingProperties: true })));
  if (problems.length) throw new UsageError(problems.join('\n'));
  if (dto.password === undefined) {
    dto.password = await readPassword();
    if (dto.password === '')
      throw new UsageError('a password is required (on standard input, or --password)');
  }
  problems.push(...(await argumentProblems(dto)));
  if (problems.length) throw new UsageError(problems.join('\n'));
  return dto;
}

/** The DTO's validation messages, each named by its option. */
async function argumentProblems(dto: CreateAdminDto, options: ValidatorOptions = {}): Promise<string[]> {
  const problems: string[] = [];
  const option: Record<string, string> = { roleName: 'role', fullName: 'name' };
  for (const error of await validate(dto, options)) {
    // Messages never echo the password: class-validator's length messages name only the limit.
    const flag = `--${option[error.property] ?? error.property}`;
    if (error.property === 'roleName') {
      problems.push(`${flag} must be one of ${ADMIN_ROLE_NAMES.join(', ')}`);
      continue;
    }
    for (const message of Object.values(error.constraints ?? {})) {
      problems.push(`${flag}: ${message.replace(/^\w+ /, '')}`);
    }
  }
  return problems;
}

/**
 * The password from standard input: on a terminal, asked for with nothing echoed (raw mode, so
 * it never shows on screen); otherwise the first line of what is piped in.
 */
export function readPasswordFromStdin(): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    return new Promise((resolve, reject) => {
      let text = '';
      stdin.setEncoding('utf8');
      stdin.on('data', (chunk: string) => (text += chunk));
      stdin.on('end', () => resolve(text.split(/\r?\n/, 1)[0]));
      stdin.on('error', reject);
    });
  }
  process.stderr.write('Password (not shown): ');
  return new Promise((resolve, reject) => {
    let password = '';
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    const done = (result: () => void) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      result();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(password));
        if (ch === '\u0003') return done(() => reject(new UsageError('cancelled')));
        if (ch === '\u007f' || ch === '\b') password = [...password].slice(0, -1).join('');
        else if (ch >= ' ') password += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function main(argv: string[]): Promise<number> {
  let dto: CreateAdminDto;
  try {
    dto = await parseAdminArgs(argv);
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n\n${USAGE}\n`);
    return 1;
  }

  const app = await NestFactory.createApplicationContext(AdminCliModule, { logger: ['error', 'fatal'] });
  try {
    const admin = await app.get(AdminsService).create(dto);
    process.stdout.write(
      `Created admin ${admin.uuid}\n  email: ${admin.email}\n  role:  ${admin.role.name}\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof DomainError) {
      process.stderr.write(`Could not create the admin: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2))
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      const text =
        error instanceof ConfigurationError
          ? error.message
          : `Failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      process.stderr.write(`${text}\n`);
      process.exit(1);
    });
}
