import type { DnsRecord, RecordPurpose, RecordStatus } from './entities/domain.entity';

/** What the records of a domain are made from. */
export interface RecordInputs {
  domain: string;
  verificationToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  spfInclude: string;
  returnPathPrefix: string;
  returnPathHost: string;
}

/** The records to publish, in the order of resources.md, all `unchecked`. */
export function recordsToPublish(i: RecordInputs): DnsRecord[] {
  const record = (
    purpose: RecordPurpose,
    type: DnsRecord['type'],
    host: string,
    value: string,
    required: boolean,
  ): DnsRecord => ({
    purpose,
    type,
    host,
    value,
    required,
    status: 'unchecked',
    detail: '',
    checkedAt: null,
  });
  return [
    record('ownership', 'TXT', i.domain, `relay-verification=${i.verificationToken}`, true),
    record('spf', 'TXT', i.domain, `v=spf1 include:${i.spfInclude} ~all`, true),
    record(
      'dkim',
      'TXT',
      `${i.dkimSelector}._domainkey.${i.domain}`,
      `v=DKIM1; k=rsa; p=${i.dkimPublicKey}`,
      true,
    ),
    record('dmarc', 'TXT', `_dmarc.${i.domain}`, 'v=DMARC1; p=none;', false),
    record('return-path', 'CNAME', `${i.returnPathPrefix}.${i.domain}`, i.returnPathHost, false),
  ];
}

/** What a DNS query found: the answers, none (NXDOMAIN/NODATA), or no answer in time. */
export type Lookup<T> = { answers: T[] } | { none: true } | { timeout: true } | { error: string };

export interface CheckResult {
  status: Exclude<RecordStatus, 'unchecked'>;
  detail: string;
}

const ok = (detail = 'Found'): CheckResult => ({ status: 'ok', detail });
const missing = (detail: string): CheckResult => ({ status: 'missing', detail });
const invalid = (detail: string): CheckResult => ({ status: 'invalid', detail });

/** TXT answers as resolveTxt gives them (each a list of strings of at most 255 bytes), joined. */
export const joinTxt = (answers: string[][]): string[] => answers.map((parts) => parts.join(''));

/** The common outcomes of a lookup that found nothing usable, or null to go on checking. */
function unusable<T>(lookup: Lookup<T>, what: string): CheckResult | null {
  if ('timeout' in lookup) return missing('DNS timeout');
  if ('error' in lookup) return missing(`DNS error: ${lookup.error}`);
  if ('none' in lookup || lookup.answers.length === 0) return missing(`No ${what} record found`);
  return null;
}

export function checkOwnership(lookup: Lookup<string[]>, token: string): CheckResult {
  const none = unusable(lookup, 'TXT');
  if (none) return none;
  const txts = joinTxt((lookup as { answers: string[][] }).answers);
  if (txts.some((t) => t.trim() === `relay-verification=${token}`)) return ok();
  return txts.some((t) => t.trim().startsWith('relay-verification='))
    ? invalid('The relay-verification value differs from this domain’s token')
    : missing('No relay-verification TXT record found');
}

/** Exactly one `v=spf1` record, and it includes ours. */
export function checkSpf(lookup: Lookup<string[]>, include: string): CheckResult {
  const none = unusable(lookup, 'TXT');
  if (none) return none;
  const spf = joinTxt((lookup as { answers: string[][] }).answers).filter((t) =>
    /^v=spf1(\s|$)/i.test(t.trim()),
  );
  if (spf.length === 0) return missing('No v=spf1 record found');
  if (spf.length > 1) return invalid(`${spf.length} v=spf1 records found: a domain must have exactly one`);
  const terms = spf[0].trim().toLowerCase().split(/\s+/);
  return terms.includes(`include:${include.toLowerCase()}`) ||
    terms.includes(`+include:${include.toLowerCase()}`)
    ? ok()
    : invalid(`The v=spf1 record does not include include:${include}`);
}

/** The DKIM record's `p=` is our public key (whitespace inside the key is ignored). */
export function checkDkim(lookup: Lookup<string[]>, publicKey: string): CheckResult {
  const none = unusable(lookup, 'DKIM TXT');
  if (none) return none;
  const keys = joinTxt((lookup as { answers: string[][] }).answers)
    .map((t) => dkimTags(t))
    .filter((tags) => tags.has('p'));
  if (!keys.length) return missing('No DKIM record with a p= key found');
  return keys.some((tags) => tags.get('p') === publicKey && (tags.get('k') ?? 'rsa').toLowerCase() === 'rsa')
    ? ok()
    : invalid('The DKIM public key differs from this domain’s key');
}

export function checkDmarc(lookup: Lookup<string[]>): CheckResult {
  const none = unusable(lookup, 'DMARC TXT');
  if (none) return none;
  const dmarc = joinTxt((lookup as { answers: string[][] }).answers).filter((t) =>
    /^v=DMARC1/i.test(t.trim()),
  );
  if (dmarc.length === 1) return ok();
  return dmarc.length === 0
    ? missing('No TXT record starting with v=DMARC1 found')
    : invalid(`${dmarc.length} DMARC records found: a domain must have exactly one`);
}

export function checkReturnPath(lookup: Lookup<string>, target: string): CheckResult {
  const none = unusable(lookup, 'CNAME');
  if (none) return none;
  const names = (lookup as { answers: string[] }).answers.map(canonicalName);
  return names.includes(canonicalName(target))
    ? ok()
    : invalid(`The CNAME points to ${names.join(', ')}, not ${target}`);
}

/** Verified when ownership, SPF and DKIM are all `ok`. */
export function passes(records: readonly DnsRecord[]): boolean {
  const required: RecordPurpose[] = ['ownership', 'spf', 'dkim'];
  return required.every((p) => records.find((r) => r.purpose === p)?.status === 'ok');
}

/** Whether the SPF or DKIM record is no longer `ok` (what makes a verified domain `failed`). */
export function lostSpfOrDkim(records: readonly DnsRecord[]): boolean {
  return records.some((r) => (r.purpose === 'spf' || r.purpose === 'dkim') && r.status !== 'ok');
}

function dkimTags(txt: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of txt.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

const canonicalName = (name: string): string => name.trim().toLowerCase().replace(/\.$/, '');
