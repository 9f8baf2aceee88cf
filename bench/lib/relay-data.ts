import { randomUUID } from 'node:crypto';
import type { BenchDatabase } from './database';

/** Rows per INSERT: well under SQLite's 32,766 bound parameters. */
const BATCH = 500;

export interface RelayData {
  /** Relay usernames of the active, paid companies. */
  relayUsernames: string[];
  /** One address on each company's own suppression list (for the companies that have one). */
  suppressedOf: Map<string, string>;
}

/**
 * The body a relay sends for one message of company `i`: its relay username, a sender, and
 * three recipients: one on its own suppression list, one on the global list, one clean.
 */
export function relayQuery(data: RelayData, i: number): string {
  const { relayUsername, message } = messageOf(data, i);
  return JSON.stringify({ relayUsername, clientAddress: '203.0.113.7', ...message });
}

/**
 * The same message of company `i` from a relay that does not authenticate: the company is the
 * one whose allowed network (see seedRelayData) holds the client address.
 */
export function relayQueryByAddress(data: RelayData, i: number): string {
  const { company, message } = messageOf(data, i);
  return JSON.stringify({ clientAddress: allowedNetworkOf(company).replace(/0\/28$/, '5'), ...message });
}

function messageOf(data: RelayData, i: number) {
  const company = (i * 7919) % data.relayUsernames.length;
  const relayUsername = data.relayUsernames[company];
  return {
    company,
    relayUsername,
    message: {
      sender: `news@company${i}.example`,
      recipients: [
        data.suppressedOf.get(relayUsername) ?? `own${i}@example.net`,
        'suppressed0@example.net',
        `clean${i}@example.org`,
      ],
      size: 20_480,
    },
  };
}

/** Company `i`'s network that may relay without SMTP authentication: 10.a.b.0/28, one each. */
function allowedNetworkOf(i: number): string {
  return `10.${(i >> 8) & 255}.${i & 255}.0/28`;
}

/**
 * The realistic data of issue 9's relay-status figure: `companies` paid, active companies and
 * `suppressed` suppression entries (a tenth of them global), each company with an allowed network
 * of its own, written straight into the service's migrated database.
 */
export async function seedRelayData(
  db: BenchDatabase,
  counts: { companies: number; suppressed: number } = { companies: 10_000, suppressed: 20_000 },
): Promise<RelayData> {
  const now = new Date();
  const periodEnd = new Date(now.getTime() + 30 * 86_400_000);
  const packageUuid = randomUUID();
  const statements: Array<{ sql: string; params: unknown[] }> = [];
  const relayUsernames: string[] = [];
  for (let start = 0; start < counts.companies; start += BATCH) {
    const rows: unknown[][] = [];
    for (let i = start; i < Math.min(start + BATCH, counts.companies); i++) {
      const relayUsername = `r-bench${String(i).padStart(6, '0')}`;
      relayUsernames.push(relayUsername);
      rows.push([
        randomUUID(),
        `Bench company ${i}`,
        relayUsername,
        packageUuid,
        now,
        periodEnd,
        1_000_000,
        i,
        JSON.stringify([allowedNetworkOf(i)]),
      ]);
    }
    statements.push({
      sql:
        'INSERT INTO companies (uuid, name, relay_username, package_uuid, period_start, period_end, quota, used, allowed_ips) VALUES ' +
        rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', '),
      params: rows.flat(),
    });
  }
  await db.execute(statements);

  statements.length = 0;
  const suppressedOf = new Map<string, string>();
  for (let start = 0; start < counts.suppressed; start += BATCH) {
    const rows: unknown[][] = [];
    for (let i = start; i < Math.min(start + BATCH, counts.suppressed); i++) {
      const email = `suppressed${i}@example.net`;
      const global = i % 10 === 0;
      const owner = global ? null : relayUsernames[i % relayUsernames.length];
      if (owner && !suppressedOf.has(owner)) suppressedOf.set(owner, email);
      rows.push([randomUUID(), email, global ? 'hard_bounce' : 'manual', global ? 'admin' : 'user', owner]);
    }
    statements.push({
      sql:
        'INSERT INTO suppression_entries (uuid, email, reason, source, company_id) VALUES ' +
        rows.map(() => '(?, ?, ?, ?, (SELECT id FROM companies WHERE relay_username = ?))').join(', '),
      params: rows.flat(),
    });
  }
  await db.execute(statements);
  return { relayUsernames, suppressedOf };
}
