import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsaKeyPair = promisify(generateKeyPair);

/** A new DKIM key pair: the public key as base64 DER (SPKI), the private key as PKCS#8 PEM. */
export interface DkimKeyPair {
  publicKeyBase64: string;
  privateKeyPem: string;
}

/**
 * RSA-2048 DKIM key pairs, made one at a time per process (resources.md "Domain"). A key takes
 * tens of milliseconds of a libuv pool thread, the pool argon2 hashes passwords on: with one
 * generation at a time, any number of domain adds in flight hold at most one of its four
 * threads, and logins keep the others. Callers wait their turn in a FIFO queue.
 */
@Injectable()
export class DkimKeyPairs implements OnApplicationShutdown {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Generations waiting or running in this process. */
  get pending(): number {
    return this.queued;
  }

  /** A new key pair, made after the ones already asked for. */
  make(): Promise<DkimKeyPair> {
    this.queued += 1;
    const turn = this.tail.then(() => this.generate()).finally(() => (this.queued -= 1));
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** Lets a generation in progress finish before the process goes. */
  async onApplicationShutdown(): Promise<void> {
    await this.tail;
  }

  /** One generation on the thread pool; only `make`'s queue calls it. */
  async generate(): Promise<DkimKeyPair> {
    const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    return { publicKeyBase64: publicKey.toString('base64'), privateKeyPem: privateKey };
  }
}
