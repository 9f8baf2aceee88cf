import { Injectable } from '@nestjs/common';

/** A scheduled job: safe to run twice; returns how many things it changed. */
export interface ScheduledJob {
  /** As listed in the `t3st-job` row of endpoints.md, e.g. `expire-billings`. */
  name: string;
  run(): Promise<number>;
  /** Cron expression (with seconds) when the job wants another cadence than the jobs module's table. */
  cron?: string;
}

/**
 * Each area registers its jobs here (in its constructor or onModuleInit: the jobs module
 * schedules what is registered when the application has bootstrapped), runs them on one
 * replica at a time, and runs them on demand (`GET /api/v1/t3st-job`).
 */
@Injectable()
export class JobRegistry {
  private readonly jobs = new Map<string, ScheduledJob>();

  register(job: ScheduledJob): void {
    if (this.jobs.has(job.name)) throw new Error(`Job ${job.name} is registered twice`);
    this.jobs.set(job.name, job);
  }

  /**
   * Adds a part to a job several areas share (`retry-callbacks`: payment callbacks, log batches,
   * …): the job runs its parts in turn and counts what they all changed.
   */
  contribute(name: string, run: () => Promise<number>): void {
    const existing = this.jobs.get(name);
    if (!existing) return this.register({ name, run });
    this.jobs.set(name, { ...existing, run: async () => (await existing.run()) + (await run()) });
  }

  get(name: string): ScheduledJob | undefined {
    return this.jobs.get(name);
  }

  names(): string[] {
    return [...this.jobs.keys()];
  }
}
