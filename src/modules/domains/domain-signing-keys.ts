import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { ChangeNotices } from '../../database/change-notices';
import { DomainEvents } from './domain-events';
import { Domain } from './entities/domain.entity';

export interface DomainSigningKey {
  selector: string;
  /** PKCS#8 PEM, decrypted. */
  privateKeyPem: string;
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/** A cached answer, boxed: lru-cache holds no null, and "no key" is an answer worth keeping. */
interface Held {
  key: DomainSigningKey | null;
}

/**
 * The DKIM signing key of a verified domain, for the milter: read once per process and kept a
 * minute (the least recently used out first past MAX_ENTRIES), forgotten at once when the domain
 * stops being verified or is deleted (DomainEvents: this process's changes and, through
 * ChangeNotices, the other processes'), and all at once when the notices' connection comes back
 * after a loss (the changes meanwhile reached nobody). Concurrent reads of one domain share one
 * load; a load a change overtook answers its callers but is not kept.
 */
@Injectable()
export class DomainSigningKeys implements OnModuleDestroy {
  private readonly cache = new LRUCache<string, Held>({
    max: MAX_ENTRIES,
    ttl: TTL_MS,
    ignoreFetchAbort: true,
    fetchMethod: async (name) => ({ key: await this.load(name) }),
  });
  private readonly unsubscribe: Array<() => void>;

  constructor(
    @InjectRepository(Domain) private readonly domains: Repository<Domain>,
    private readonly encryption: EncryptionService,
    events: DomainEvents,
    notices: ChangeNotices,
  ) {
    this.unsubscribe = [
      events.onChange((change) => this.cache.delete(change.name)),
      notices.onReconnect(() => this.cache.clear()),
    ];
  }

  onModuleDestroy(): void {
    for (const stop of this.unsubscribe) stop();
  }

  /** The key of the verified domain with this name (as stored: lower case, punycode), or null. */
  async signingKey(name: string): Promise<DomainSigningKey | null> {
    return (await this.cache.fetch(name))!.key;
  }

  private async load(name: string): Promise<DomainSigningKey | null> {
    const row = await this.domains.findOne({
      select: { id: true, dkimSelector: true, dkimPrivateKey: true },
      where: { name, status: 'verified' },
    });
    return row
      ? { selector: row.dkimSelector, privateKeyPem: this.encryption.decrypt(row.dkimPrivateKey) }
      : null;
  }
}
