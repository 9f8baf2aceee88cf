import { setFlagsFromString } from 'node:v8';

/**
 * V8 lets the old generation grow to up to 4× what survived the last full collection before it
 * collects again; at 60-90 MB of live heap under load that is hundreds of MB of garbage. Growing
 * by at most 1.5× bounds it. Imported first by both processes:
 *
 * - the API: with the libuv pool capped (thread-pool.ts) and nothing in the environment, the
 *   bench's highest RSS (VmHWM, start through every HTTP run, SQLite, 100,000 records) was 409 MB
 *   at 100 % and 344 MB at 50 % (first routes alone: 299 and 252 MB); its CPU per request did not
 *   move beyond the machine's noise (relay-status 551 against 599 µs, users/me 358 against 324 µs);
 * - the relay agent: 12,000-15,000 policy decisions a second took it from 130 to 256-271 MB of
 *   resident memory with 61 MB of it live (a heap snapshot right after), which left the 10 MB
 *   messages and the hostile clients that follow in the bench over their 300 MB.
 *
 * Read by V8 at every collection, so setting it at start, before the application is built, is enough.
 */
setFlagsFromString('--heap-growing-percent=50');
