const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** `60s`, `15m`, `1d`, or a bare number of seconds → whole seconds. */
export function durationToSeconds(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) throw new Error(`Not a duration: ${value}`);
  return Math.max(1, Math.floor(Number(match[1]) * UNIT_SECONDS[match[2] ?? 's']));
}
