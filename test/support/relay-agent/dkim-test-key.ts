import { generateKeyPairSync } from 'node:crypto';
import { authenticate } from 'mailauth';

/** An RSA-2048 key pair as the domains area makes one: PKCS#8 PEM and the `p=` value. */
export function dkimTestKey(): { privateKeyPem: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}

/** A mailauth resolver that knows only the given `<selector>._domainkey.<domain>` TXT records. */
export function txtResolver(records: Record<string, string>) {
  return (name: string, type: string): Promise<string[][]> => {
    const record = records[name.toLowerCase()];
    if (type === 'TXT' && record) return Promise.resolve([[record]]);
    return Promise.reject(Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' }));
  };
}

/** The message as the next hop gets it: the milter's inserted header first, CRLF everywhere. */
export function deliveredMessage(
  inserted: Array<{ name: string; value: string }>,
  headers: Array<[string, string]>,
  body: Buffer,
): Buffer {
  const crlf = (v: string) => v.replace(/\r?\n/g, '\r\n');
  const head = [...inserted.map((h) => [h.name, h.value] as const), ...headers]
    .map(([name, value]) => `${name}: ${crlf(value)}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(head + '\r\n', 'utf8'), body]);
}

/** mailauth's DKIM verdicts for a delivered message. */
export async function dkimResults(message: Buffer, records: Record<string, string>) {
  const result = await authenticate(message, {
    ip: '192.0.2.10',
    helo: 'client.example',
    mta: 'mx.example.net',
    sender: 'news@acme.test',
    resolver: txtResolver(records),
    disableArc: true,
    disableBimi: true,
  });
  return result.dkim.results.map((r) => ({
    domain: r.signingDomain,
    result: r.status.result,
    aligned: r.status.aligned,
    comment: r.status.comment,
  }));
}
