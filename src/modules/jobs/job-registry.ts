import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { JOB_METADATA, JobMetadata } from './job.decorator';

/** A scheduled job: safe to run twice; returns how many things it changed. */
export interface ScheduledJob {
  /** As listed in the `t3st-job` row of endpoints.md, e.g. `expire-billings`. */
  name: string;
  run(): Promise<number>;
  /** Cron expression (with seconds) when the job wants another cadence than the jobs module's table. */
  cron?: string;
}

/**
 * The jobs of the application: every provider method marked @Job(name), found when the modules
 * initialise (the jobs module schedules them once the application has bootstrapped, runs them
 * on one replica at a time, and on demand: `GET /api/v1/t3st-job`). `register` and `contribute`
 * are what the discovery calls; tests use them to add a job of their own.
 */
@Injectable()
export class JobRegistry implements OnModuleInit {
  private readonly jobs = new Map<string, ScheduledJob>();
  /** The jobs made of parts (`contribute`); only those take another part. */
  private readonly shared = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** Registers every @Job method of the application's providers (each instance once). */
  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (
        !instance ||
        typeof instance !== 'object' ||
        !wrapper.isDependencyTreeStatic() ||
        seen.has(instance)
      )
        continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const job = this.reflector.get<JobMetadata | undefined>(JOB_METADATA, fn);
        if (!job) continue;
        const run = () => (fn as () => Promise<number>).call(instance);
        if (job.shared) this.contribute(job.name, run);
        else this.register({ name: job.name, run, cron: job.cron });
      }
    }
  }

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
    if (existing && !this.shared.has(name)) throw new Error(`Job ${name} is registered twice`);
    this.shared.add(name);
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
