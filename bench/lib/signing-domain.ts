import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { EncryptionService } from '../../src/common/crypto/encryption.service';
import { AppConfig } from '../../src/config/app-config';
import type { BenchDatabase } from './database';

export interface SigningDomain {
  domain: string;
  selector: string;
  /** PKCS#8 PEM, as the domains area generates it (stored encrypted). */
  privateKeyPem: string;
  /** The company's relay username: its AUTH identity. */
  relayUsername: string;
}

/**
 * A verified domain of the company with `relayUsername`, as the domains area stores one once its
 * DNS records check out (DomainsService.add, then a verification): an RSA-2048 key pair, the
 * private key in PKCS#8 PEM encrypted by the service's own EncryptionService with
 * `encryptionKey` (the ENCRYPTION_KEY the agent gets, so it can decrypt it), status verified.
 */
export async function seedSigningDomain(
  db: BenchDatabase,
  encryptionKey: string,
  relayUsername: string,
  domain: string,
): Promise<SigningDomain> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const encryption = new EncryptionService(
    AppConfig.fromEnv({ NODE_ENV: 'test', ENCRYPTION_KEY: encryptionKey }),
  );
  const selector = 'rsbench';
  const now = new Date();
  await db.execute([
    {
      sql:
        'INSERT INTO domains (uuid, company_id, name, status, verification_token, dkim_selector, dkim_public_key, ' +
        'dkim_private_key, records, last_checked_at, verified_at) ' +
        "VALUES (?, (SELECT id FROM companies WHERE relay_username = ?), ?, 'verified', ?, ?, ?, ?, '[]', ?, ?)",
      params: [
        randomUUID(),
        relayUsername,
        domain,
        randomBytes(16).toString('hex'),
        selector,
        publicKey.toString('base64'),
        encryption.encrypt(privateKey),
        now,
        now,
      ],
    },
  ]);
  return { domain, selector, privateKeyPem: privateKey, relayUsername };
}
