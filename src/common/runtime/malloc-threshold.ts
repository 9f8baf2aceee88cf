import koffi from 'koffi';

/** glibc's M_MMAP_THRESHOLD (malloc.h): blocks of at least this many bytes are mmapped. */
const M_MMAP_THRESHOLD = -3;
export const MMAP_THRESHOLD_BYTES = 1024 * 1024;

/**
 * Fixes glibc's mmap threshold at 1 MiB, as MALLOC_MMAP_THRESHOLD_=1048576 in the environment
 * would, for a process started as a user starts it (`node dist/main.js`, no environment).
 *
 * Why: argon2 hashes on the libuv pool with 19 MiB each (auth.md). glibc serves the first block
 * with mmap and unmaps it when freed, but that free raises its (dynamic) threshold past 19 MiB, so
 * every later block comes from the arena of the pool thread that hashes and stays resident there:
 * 19 MiB per pool thread, ~40 MB of the service's 300 MB budget. A fixed threshold also stops the
 * dynamic one from rising (mallopt turns the adjustment off): every block of 1 MiB or more, a hash
 * or a 1 MB request body, goes back to the system when freed.
 *
 * Through koffi (a maintained FFI library with prebuilt binaries) rather than a native module of
 * our own. Does nothing where it cannot apply (not glibc: macOS, musl) or where the operator set
 * the variable. Answers whether the threshold was set here.
 */
export function fixMmapThreshold(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform !== 'linux' || env.MALLOC_MMAP_THRESHOLD_ !== undefined) return false;
  try {
    const mallopt = koffi.load('libc.so.6').func('int mallopt(int param, int value)') as (
      param: number,
      value: number,
    ) => number;
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) === 1;
  } catch {
    return false;
  }
}

fixMmapThreshold();
