import { availableParallelism } from 'node:os';

/**
 * The libuv thread pool's size, set before anything uses the pool (libuv reads
 * UV_THREADPOOL_SIZE once, when the first task is queued), so import this module first.
 *
 * Why: argon2 hashes on the pool with 19 MiB each (auth.md). glibc serves the first block with
 * mmap and unmaps it when freed, but that free raises its mmap threshold past 19 MiB, so every
 * later block comes from the arena of the pool thread that hashes, and stays resident there:
 * 19 MiB per thread that has ever hashed, ~80 MB with libuv's default of 4 threads (measured
 * by `npm run bench`). A hash is pure CPU, so threads beyond the cores add memory and no
 * throughput: one per core, at least 2 (a hash never waits alone behind file or DNS work), at
 * most libuv's 4. A UV_THREADPOOL_SIZE set by the operator (environment or .env) wins.
 *
 * malloc-threshold.ts removes the rest: with glibc's mmap threshold fixed, it unmaps every hash's
 * memory.
 */
export function defaultThreadPoolSize(cores = availableParallelism()): number {
  return Math.min(4, Math.max(2, cores));
}

if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = String(defaultThreadPoolSize());
