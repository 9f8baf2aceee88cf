import { Injectable, OnModuleInit } from '@nestjs/common';
import { JobRegistry } from '../jobs/job-registry';
import { BlacklistService } from './blacklist.service';

/** `purge-blacklist` (hourly): deletes revoked refresh tokens whose expiry has passed. Safe to run twice. */
@Injectable()
export class BlacklistPurgeJob implements OnModuleInit {
  constructor(
    private readonly registry: JobRegistry,
    private readonly blacklist: BlacklistService,
  ) {}

  onModuleInit(): void {
    this.registry.register({ name: 'purge-blacklist', run: () => this.blacklist.purgeExpired() });
  }
}
