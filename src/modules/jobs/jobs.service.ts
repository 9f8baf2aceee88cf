import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { CronExpression, SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { BadRequestError } from '../../common/errors/domain-error';
import { TransactionService } from '../../database/transaction.service';
import { JobRunDto } from './dto/job-response.dto';
import { JobRegistry } from './job-registry';

/** How often each job of endpoints.md runs (cron with seconds), unless the job says otherwise. */
export const JOB_CADENCE: Readonly<Record<string, string>> = {
  'expire-billings': CronExpression.EVERY_MINUTE,
  'billing-reminders': CronExpression.EVERY_HOUR,
  'purge-blacklist': CronExpression.EVERY_HOUR,
  'retry-callbacks': CronExpression.EVERY_MINUTE,
  'recheck-domains': CronExpression.EVERY_DAY_AT_3AM,
  'crm-sync': CronExpression.EVERY_HOUR,
};
/** For a job missing from the table. */
export const DEFAULT_JOB_CADENCE = CronExpression.EVERY_HOUR;

/** First key of our advisory locks ("rela"), so they never meet another application's on the same database. */
export const JOB_LOCK_NAMESPACE = 0x72656c61;

/** Second key of a job's advisory lock: a stable 32-bit integer from its name. */
export function jobLockKey(name: string): number {
  return createHash('sha256').update(name).digest().readInt32BE(0);
}

/** The name of a job's cron in the SchedulerRegistry. */
export const cronNameOf = (job: string): string => `job:${job}`;

/** How long shutdown waits for running jobs before the database is closed under them. */
const SHUTDOWN_WAIT_MS = 10_000;

/**
 * TypeORM's PostgresQueryRunner (0.3) releases its pg client with an error through this
 * method, which makes the pool destroy the client (and so end the session and its locks).
 */
interface ReleasableWithError {
  releasePostgresConnection(err: unknown): Promise<void>;
}

type LockRow = { locked: boolean };
type LockOutcome = { skipped: true } | { skipped: false; affected: number };

/**
 * Schedules every registered job and runs jobs on one replica at a time: on PostgreSQL a
 * session advisory lock per job, taken and released on one dedicated connection; a replica
 * that finds the lock held skips the run (not a failure). SQLite is one process's file, so
 * there the lock is a no-op; within a process a job never overlaps itself on either database.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobsService.name);
  private readonly running = new Map<string, Promise<JobRunDto>>();

  constructor(
    private readonly registry: JobRegistry,
    private readonly scheduler: SchedulerRegistry,
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
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
        const outcome = await this.underLock(name, () => this.registry.get(name)!.run());
        if (outcome.skipped) {
          this.logger.debug(`Job ${name} skipped: it is running on another replica`);
          return result(true, 0, true);
        }
        if (outcome.affected) this.logger.log(`Job ${name} changed ${outcome.affected}`);
        return result(true, outcome.affected, false);
      } catch (err: unknown) {
        this.logger.error({ err, job: name }, `Job ${name} failed`);
        return result(false, 0, false);
      } finally {
        this.running.delete(name);
      }
    })();
    this.running.set(name, run);
    return run;
  }

  private async underLock(name: string, work: () => Promise<number>): Promise<LockOutcome> {
    if (!this.transactions.isPostgres) return { skipped: false, affected: await work() };

    // A session-level lock belongs to one connection: lock and unlock on the same one.
    const runner = this.dataSource.createQueryRunner();
    const keys = [JOB_LOCK_NAMESPACE, jobLockKey(name)];
    let unlockError: unknown;
    try {
      await runner.connect();
      const rows = (await runner.query('SELECT pg_try_advisory_lock($1, $2) AS locked', keys)) as LockRow[];
      if (!rows[0]?.locked) return { skipped: true };
      try {
        return { skipped: false, affected: await work() };
      } finally {
        try {
          await runner.query('SELECT pg_advisory_unlock($1, $2)', keys);
        } catch (err: unknown) {
          unlockError = err;
          this.logger.error({ err, job: name }, `Job ${name}: advisory unlock failed`);
        }
      }
    } finally {
      // A connection that may still hold the lock is destroyed, never handed back to the pool.
      if (unlockError)
        await (runner as unknown as ReleasableWithError).releasePostgresConnection(unlockError);
      else await runner.release();
    }
  }
}
