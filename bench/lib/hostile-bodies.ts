import { cpuMicros, RunningService } from './service';

/**
 * quality.md / README.md "Bodies": refusing a body up to a route's limit costs time linear in
 * its size and small. Each body here is just under 1 MB and built to hit one costly path of
 * refusal; each is sent REPEAT times, one at a time, and must be refused with a 400.
 */
const REPEAT = 10;
const NEAR_1_MB = 1024 * 1024 - 1024;

export const HOSTILE_BODIES: Array<{ name: string; path: string; body: () => string }> = [
  {
    name: '90,000 unknown keys',
    path: '/api/v1/users/login',
    body: () => `{${Array.from({ length: 90_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`,
  },
  {
    name: 'a 1 MB e-mail address',
    path: '/api/v1/users/login',
    body: () =>
      JSON.stringify({ email: `${'a'.repeat(NEAR_1_MB - 60)}@example.com`, password: 'x'.repeat(12) }),
  },
  {
    name: '1 MB of surrogate escapes, one lone',
    path: '/api/v1/users/login',
    body: () => {
      const pairs = '\\ud83d\\ude00'.repeat(Math.floor((NEAR_1_MB - 80) / 12));
      return `{"email":"a@b.co","password":"${pairs}\\ud800"}`;
    },
  },
  {
    name: '1 MB array of 170,000 numbers',
    path: '/api/v1/users/login',
    body: () => `{"email":[${Array.from({ length: 170_000 }, (_, i) => i % 10).join(',')}],"password":"x"}`,
  },
];

export interface HostileBodyRun {
  name: string;
  bytes: number;
  status: number;
  responseBytes: number;
  /** Slowest of REPEAT requests, wall clock on loopback (sending the body included). */
  worstMs: number;
  medianMs: number;
  /** The service's own CPU per request (user + system). */
  serviceCpuMsPerRequest: number | null;
}

export async function measureHostileBodies(service: RunningService): Promise<HostileBodyRun[]> {
  const runs: HostileBodyRun[] = [];
  for (const hostile of HOSTILE_BODIES) {
    const body = hostile.body();
    if (Buffer.byteLength(body) > 1024 * 1024) throw new Error(`${hostile.name}: body over 1 MB`);
    const times: number[] = [];
    let status = 0;
    let responseBytes = 0;
    const cpuBefore = cpuMicros(service.pid);
    for (let i = 0; i < REPEAT; i++) {
      const started = process.hrtime.bigint();
      const res = await fetch(`${service.baseUrl}${hostile.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      status = res.status;
      responseBytes = Buffer.byteLength(text);
      if (status !== 400)
        throw new Error(`${hostile.name}: expected 400, got ${status}: ${text.slice(0, 200)}`);
    }
    const cpuAfter = cpuMicros(service.pid);
    times.sort((a, b) => a - b);
    runs.push({
      name: hostile.name,
      bytes: Buffer.byteLength(body),
      status,
      responseBytes,
      worstMs: times[times.length - 1],
      medianMs: times[Math.floor(times.length / 2)],
      serviceCpuMsPerRequest:
        cpuBefore === undefined || cpuAfter === undefined ? null : (cpuAfter - cpuBefore) / 1000 / REPEAT,
    });
  }
  return runs;
}
