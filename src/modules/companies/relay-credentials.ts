import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import argon2 from 'argon2';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Repository } from 'typeorm';
import { DatabaseRuntime, KeyedRead } from '../../database/database-runtime';
import { isSubmissionToken } from '../relay-submission/submission-token';
import { SubmissionTokens } from '../relay-submission/submission-tokens';
import { Company } from './entities/company.entity';

/** The company a relay username and password belong to. */
export type RelayAccount = Pick<Company, 'id' | 'uuid' | 'relayUsername'>;

const DIGEST_PREFIX = 'sha256:';

/**
 * A new relay password: 24 random bytes, base64url (resources.md), drawn again while it would
 * start with `-`. Customers paste it into command lines (swaks, scripts), where a leading dash
 * reads as an option: swaks refuses `--auth-password -x…` and `--auth-password=-x…` alike.
 */
export function newRelayPassword(): string {
  for (;;) {
    const password = randomBytes(24).toString('base64url');
    if (!password.startsWith('-')) return password;
  }
}

/** What `companies.relay_password_hash` holds for a relay password: `sha256:<64 hex>`. */
export function relayPasswordDigest(password: string): string {
  return DIGEST_PREFIX + createHash('sha256').update(password, 'utf8').digest('hex');
}

/** Compared against when the username is unknown, so both failures cost the same. */
const NO_DIGEST = Buffer.alloc(32);

/** Relay usernames are `r-` and 8 base-36 characters; the column holds at most 32. */
const MAX_USERNAME = 32;

/**
 * SMTP AUTH's credentials check (integrations.md "Relay agent"): an indexed read of the unique
 * relay username for every attempt (concurrent attempts share one statement), no cache, so a
 * password rotated through the API fails at once in every agent process. The password is stored
 * as its SHA-256 digest (resources.md Company: a 24-byte random secret needs no slow hash) and
 * compared in constant time. Beside the password, a relay submission token made for that relay
 * username is taken (auth.md "Relay submission token": how the service submits messages sent by
 * HTTP); one that is not valid is checked as a password, so it fails as a wrong one.
 */
@Injectable()
export class RelayCredentials {
  private readonly accounts: KeyedRead<AccountRow>;

  constructor(
    @InjectRepository(Company) private readonly companies: Repository<Company>,
    runtime: DatabaseRuntime,
    private readonly submissionTokens: SubmissionTokens,
  ) {
    // Straight to the driver, and on PostgreSQL the attempts of one moment share one statement:
    // under load each round trip's socket write cost the agent more than the read itself
    // (profiled: ~40% of its CPU per AUTH went to pg's writev).
    const column = (property: keyof Company) =>
      this.companies.metadata.findColumnWithPropertyName(property)!.databaseName;
    const select =
      `SELECT ${column('relayUsername')}, ${column('id')}, ${column('uuid')}, ${column('relayPasswordHash')} ` +
      `FROM companies WHERE ${column('relayUsername')}`;
    const read = runtime.read('relay_credentials', `${select} {list}`);
    const accounts = async (usernames: string[]) => (await read.all([usernames])) as AccountRow[];
    this.accounts = runtime.keyedRead<AccountRow>(accounts);
  }

  /**
   * The account whose relay username (any case) and current password, or valid submission token,
   * these are, or null. Throws when the database cannot answer: that is no answer about the
   * credentials.
   */
  async check(username: string, password: string): Promise<RelayAccount | null> {
    const canonical = username.toLowerCase();
    const row =
      canonical.length > 0 && canonical.length <= MAX_USERNAME && !canonical.includes('\0')
        ? await this.read(canonical)
        : undefined;
    if (row && isSubmissionToken(password) && this.submissionTokens.verify(row[0], password))
      return account(row);
    const stored = row?.[3] ?? null;
    if (stored !== null && !stored.startsWith(DIGEST_PREFIX)) {
      return (await this.upgradeLegacy(row!, stored, password)) ? account(row!) : null;
    }
    const expected = stored !== null ? Buffer.from(stored.slice(DIGEST_PREFIX.length), 'hex') : NO_DIGEST;
    const given = createHash('sha256').update(password, 'utf8').digest();
    const same = expected.length === given.length && timingSafeEqual(expected, given);
    return same && stored !== null ? account(row!) : null;
  }

  private async read(username: string): Promise<AccountRow | undefined> {
    return (await this.accounts.load([username])).get(username);
  }

  /**
   * A password stored before digests (an argon2 hash): checked with argon2 this once, then
   * replaced by its digest unless the password was rotated meanwhile (the update is
   * conditional on the old hash, so a concurrent rotation is never overwritten).
   */
  private async upgradeLegacy(row: AccountRow, stored: string, password: string): Promise<boolean> {
    const valid = await argon2.verify(stored, password).catch(() => false);
    if (valid) {
      await this.companies.update(
        { id: Number(row[1]), relayPasswordHash: stored },
        { relayPasswordHash: relayPasswordDigest(password) },
      );
    }
    return valid;
  }
}

/** username, id, uuid, password hash: the key first, as a keyed read wants it. */
type AccountRow = readonly [username: string, id: number | string, uuid: string, hash: string | null];

function account(row: AccountRow): RelayAccount {
  return { id: Number(row[1]), uuid: row[2], relayUsername: row[0] };
}
