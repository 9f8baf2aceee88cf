import { SetMetadata } from '@nestjs/common';

export const JOB_METADATA = 'jobs:job';

export interface JobOptions {
  /**
   * A part of a job several areas share (`retry-callbacks`: payment callbacks, log batches,
   * provider events): the job runs its parts in turn and counts what they all changed. Every
   * part says so; a second method with the same name and without it is an error at start.
   */
  shared?: boolean;
  /** Cron expression (with seconds) when the job wants another cadence than JOB_CADENCE's. */
  cron?: string;
}

export interface JobMetadata extends JobOptions {
  name: string;
}

/**
 * The one way an area declares a scheduled job: on the method of the provider that does the
 * work, which takes no argument (or only defaulted ones), is safe to run twice and answers how
 * many things it changed. JobRegistry finds these methods when the application starts (as
 * @nestjs/schedule finds @Cron), and JobsService schedules them and runs them on demand.
 *
 *   @Job('recheck-domains')
 *   async recheckAll(): Promise<number> { … }
 */
export const Job = (name: string, options: JobOptions = {}): MethodDecorator =>
  SetMetadata<string, JobMetadata>(JOB_METADATA, { name, ...options });
