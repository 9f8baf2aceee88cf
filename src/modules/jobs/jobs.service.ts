import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { CronExpression, SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { performance } from 'node:perf_hooks';
import { BadRequestError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { JobRunDto } from './dto/job-response.dto';
import { jobRuns } from '../metrics/metrics';
import { JobRegistry } from './job-registry';

/** How often each job of endpoints.md runs (cron with seconds), unless the job says otherwise. */
export const JOB_CADENCE: Readonly<Record<string, string>> = {
  'expire-billings': CronExpression.EVERY_MINUTE,
  'billing-reminders': CronExpression.EVERY_HOUR,
  'purge-blacklist': CronExpression.EVERY_HOUR,
  'retry-callbacks': CronExpression.EVERY_MINUTE,
  'recheck-domains': CronExpression.EVERY_DAY_AT_3AM,
  'crm-sync': CronExpression.EVERY_HOUR,
  'deliverability-alerts': CronExpression.EVERY_HOUR,
};
/** For a job missing from the table. */
export const DEFAULT_JOB_CADENCE = CronExpression.EVERY_HOUR;

/** The name of a job's cron in the SchedulerRegistry. */
export const cronNameOf = (job: string): string => `job:${job}`;

/** How long shutdown waits for running jobs before the database is closed under them. */
const SHUTDOWN_WAIT_MS = 10_000;

/**
 * Schedules every registered job and runs jobs on one replica at a time: each run holds the
 * database lock named after its job (SqlDialect.withNamedLock); a replica that finds the lock
 * held skips the run (not a failure). Within a process a job never overlaps itself.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobsService.name);
  private readonly running = new Map<string, Promise<JobRunDto>>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly scheduler: SchedulerRegistry,
    private readonly dialect: SqlDialect,
  ) {}

  /** After every module's onModuleInit, so every area has registered its jobs. */
  onApplicationBootstrap(): void {
    for (const name of this.registry.names()) {
      const cronTime = this.registry.get(name)?.cron ?? JOB_CADENCE[name] ?? DEFAULT_JOB_CADENCE;
      const cron = CronJob.from({
        cronTime,
        onTick: async () => {
          await this.runOne(name);
        },
        waitForCompletion: true,
        start: true,
      });
      this.scheduler.addCronJob(cronNameOf(name), cron);
    }
  }

  /** Lets running jobs finish before the database is closed (ScheduleModule stops the crons). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running.size) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
    await Promise.race([Promise.allSettled([...this.running.values()]), timeout]);
    clearTimeout(timer);
  }

  names(): string[] {
    return this.registry.names();
  }

  /** Runs one job (a 400 listing the registered ones when unknown) or all, one after another. Never throws for a job's failure. */
  async run(name?: string): Promise<JobRunDto[]> {
    const names = name === undefined ? this.registry.names() : [name];
    if (name !== undefined && !this.registry.get(name)) {
      throw new BadRequestError(
        `Unknown job "${name}"; registered jobs: ${this.registry.names().join(', ')}`,
      );
    }
    const results: JobRunDto[] = [];
    for (const n of names) results.push(await this.runOne(n));
    return results;
  }

  private runOne(name: string): Promise<JobRunDto> {
    const started = performance.now();
    const result = (ok: boolean, affected: number, skipped: boolean): JobRunDto => ({
      job: name,
      ok,
      affected,
      ms: Math.round(performance.now() - started),
      skipped,
    });
    if (this.running.has(name)) return Promise.resolve(result(true, 0, true));

    const run = (async (): Promise<JobRunDto> => {
      try {
        const outcome = await this.dialect.withNamedLock(name, () => this.registry.get(name)!.run());
        if (!outcome.acquired) {
          this.logger.debug(`Job ${name} skipped: it is running on another replica`);
          jobRuns.inc({ job: name, result: 'skipped' });
          return result(true, 0, true);
        }
        if (outcome.result) this.logger.log(`Job ${name} changed ${outcome.result}`);
        jobRuns.inc({ job: name, result: 'ok' });
        return result(true, outcome.result, false);
      } catch (err: unknown) {
        this.logger.error({ err, job: name }, `Job ${name} failed`);
        jobRuns.inc({ job: name, result: 'failed' });
        return result(false, 0, false);
      } finally {
        this.running.delete(name);
      }
    })();
    this.running.set(name, run);
    return run;
  }
}
