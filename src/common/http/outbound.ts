/** Helpers for the service's own calls to outside HTTP APIs (payment gateway, CRM). */

/** Whether a fetch failed because its AbortSignal.timeout ran out. */
export function isTimeout(e: unknown): boolean {
  const name = (e as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** The answer's JSON object, or null when it is not one (an HTML error page, an array, nothing). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
