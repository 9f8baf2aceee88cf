import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { BlacklistService } from './blacklist.service';

/** `purge-blacklist`: deletes revoked refresh tokens whose expiry has passed. Safe to run twice. */
@Injectable()
export class BlacklistPurgeJob {
  private readonly logger = new Logger(BlacklistPurgeJob.name);

  constructor(private readonly blacklist: BlacklistService) {}

  @Cron(CronExpression.EVERY_HOUR, { name: 'purge-blacklist' })
  async run(): Promise<number> {
    const purged = await this.blacklist.purgeExpired();
    if (purged) this.logger.log(`Purged ${purged} expired blacklist entries`);
    return purged;
  }
}
