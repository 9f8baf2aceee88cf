import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, Repository } from 'typeorm';
import { DAY_MS } from '../../common/validation/date-filter';
import { Job } from '../jobs/job.decorator';
import { WebhookAttempt } from './entities/webhook-attempt.entity';

/** How long every attempt of a delivery is kept (platform.md "Delivery"). */
export const ATTEMPTS_KEPT_MS = 30 * DAY_MS;

/** Drops webhook attempts older than 30 days (a delivery keeps its last attempt's summary). */
@Injectable()
export class WebhookAttemptsPurge {
  constructor(@InjectRepository(WebhookAttempt) private readonly attempts: Repository<WebhookAttempt>) {}

  /** A part of `purge-blacklist` (hourly): answers how many attempts were dropped. */
  @Job('purge-blacklist', { shared: true })
  async purgeOld(now = new Date()): Promise<number> {
    const result = await this.attempts.delete({ at: LessThan(new Date(now.getTime() - ATTEMPTS_KEPT_MS)) });
    return result.affected ?? 0;
  }
}
