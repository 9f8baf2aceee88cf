import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import * as argon2 from 'argon2';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Repository } from 'typeorm';
import { Company } from './entities/company.entity';

/** The company a relay username and password belong to. */
export type RelayAccount = Pick<Company, 'id' | 'uuid' | 'relayUsername'>;

const DIGEST_PREFIX = 'sha256:';

/** What `companies.relay_password_hash` holds for a relay password: `sha256:<64 hex>`. */
export function relayPasswordDigest(password: string): string {
  return DIGEST_PREFIX + createHash('sha256').update(password, 'utf8').digest('hex');
}

/** Compared against when the username is unknown, so both failures cost the same. */
const NO_DIGEST = Buffer.alloc(32);

/** Relay usernames are `r-` and 8 base-36 characters; the column holds at most 32. */
const MAX_USERNAME = 32;

/**
 * SMTP AUTH's credentials check (integrations.md "Relay agent"): one indexed read of the unique
 * relay username on every attempt, no cache, so a password rotated through the API fails at
 * once in every agent process. The password is stored as its SHA-256 digest (resources.md
 * Company: a 24-byte random secret needs no slow hash) and compared in constant time.
 */
@Injectable()
export class RelayCredentials {
  private readonly select: string;

  constructor(@InjectRepository(Company) private readonly companies: Repository<Company>) {
    // Raw SQL built once: this runs on every AUTH, where the query builder costs more than the read.
    const column = (property: keyof Company) =>
      this.companies.metadata.findColumnWithPropertyName(property)!.databaseName;
    const [sql] = this.companies.manager.connection.driver.escapeQueryWithParameters(
      `SELECT ${column('id')} AS id, ${column('uuid')} AS uuid, ${column('relayUsername')} AS username, ` +
        `${column('relayPasswordHash')} AS hash FROM companies WHERE ${column('relayUsername')} = :username`,
      { username: '' },
      {},
    );
    this.select = sql;
  }

  /**
   * The account whose relay username (any case) and current password these are, or null.
   * Throws when the database cannot answer: that is no answer about the credentials.
   */
  async check(username: string, password: string): Promise<RelayAccount | null> {
    const canonical = username.toLowerCase();
    const row =
      canonical.length > 0 && canonical.length <= MAX_USERNAME && !canonical.includes('\0')
        ? await this.read(canonical)
        : undefined;
    const stored = row?.hash ?? null;
    if (stored !== null && !stored.startsWith(DIGEST_PREFIX)) {
      return (await this.upgradeLegacy(row!, stored, password)) ? account(row!) : null;
    }
    const expected = stored !== null ? Buffer.from(stored.slice(DIGEST_PREFIX.length), 'hex') : NO_DIGEST;
    const given = createHash('sha256').update(password, 'utf8').digest();
    const same = expected.length === given.length && timingSafeEqual(expected, given);
    return same && stored !== null ? account(row!) : null;
  }

  private async read(username: string): Promise<AccountRow | undefined> {
    const [row] = await this.companies.query<AccountRow[]>(this.select, [username]);
    return row;
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
        { id: Number(row.id), relayPasswordHash: stored },
        { relayPasswordHash: relayPasswordDigest(password) },
      );
    }
    return valid;
  }
}

interface AccountRow {
  id: number | string;
  uuid: string;
  username: string;
  hash: string | null;
}

function account(row: AccountRow): RelayAccount {
  return { id: Number(row.id), uuid: row.uuid, relayUsername: row.username };
}
