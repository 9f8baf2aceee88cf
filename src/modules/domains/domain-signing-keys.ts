import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { DomainEvents } from './domain-events';
import { Domain } from './entities/domain.entity';

export interface DomainSigningKey {
  selector: string;
  /** PKCS#8 PEM, decrypted. */
  privateKeyPem: string;
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * The DKIM signing key of a verified domain, for the milter: read once per process and kept a
 * minute, forgotten at once when the domain stops being verified or is deleted (DomainEvents,
 * this process's changes and, on PostgreSQL, the other processes').
 */
@Injectable()
export class DomainSigningKeys implements OnModuleDestroy {
  private readonly cache = new Map<string, { key: DomainSigningKey | null; expires: number }>();
  /** Bumped by every change, so that a read that started before it is not cached after it. */
  private generation = 0;
  private readonly stopListening: () => void;

  constructor(
    @InjectRepository(Domain) private readonly domains: Repository<Domain>,
    private readonly encryption: EncryptionService,
    events: DomainEvents,
  ) {
    this.stopListening = events.onChange((change) => {
      this.generation += 1;
      this.cache.delete(change.name);
    });
  }

  onModuleDestroy(): void {
    this.stopListening();
  }

  /** The key of the verified domain with this name (as stored: lower case, punycode), or null. */
  async signingKey(name: string): Promise<DomainSigningKey | null> {
    const cached = this.cache.get(name);
    if (cached && cached.expires > Date.now()) return cached.key;
    const generation = this.generation;
    const row = await this.domains.findOne({
      select: { id: true, dkimSelector: true, dkimPrivateKey: true },
      where: { name, status: 'verified' },
    });
    const key = row
      ? { selector: row.dkimSelector, privateKeyPem: this.encryption.decrypt(row.dkimPrivateKey) }
      : null;
    if (generation === this.generation) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(name, { key, expires: Date.now() + TTL_MS });
    }
    return key;
  }
}
