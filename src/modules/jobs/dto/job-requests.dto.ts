import { IsString, Matches, MaxLength } from 'class-validator';
import { Omittable } from '../../../common/validation/presence';

export class RunJobsQueryDto {
  /**
   * One registered job (`expire-billings`, `billing-reminders`, `purge-blacklist`,
   * `retry-callbacks`, … as far as their areas exist); absent = every job. An unknown name is
   * a 400 that lists the registered ones.
   */
  @Omittable()
  @IsString()
  @MaxLength(64)
  @Matches(/^[a-z0-9-]+$/, { message: 'job must be a job name such as expire-billings' })
  job?: string;
}
