/**
 * The three bodies a log shipper sends (integrations.md "Log shipper"), turned into lines. A
 * record that carries no line is kept as `skipped` so the answer's counts add up: `accepted`
 * counts every entry, `skipped` those that are not usable (or not Postfix, decided later).
 */
export type ShippedLine = { line: string; host?: string; at?: Date } | { skipped: true };

const LINE_FIELDS = ['message', 'log', 'MESSAGE'] as const;
const HOST_FIELDS = ['host', 'hostname'] as const;
const TIME_FIELDS = ['timestamp', '@timestamp', 'date', 'time'] as const;

/** `application/json`: an array of records, `{ "logs": [...] }`, or one record. */
export function linesFromJson(body: unknown): ShippedLine[] {
  if (Array.isArray(body)) return body.map(fromRecord);
  if (isObject(body) && Array.isArray(body.logs)) return body.logs.map(fromRecord);
  return [fromRecord(body)];
}

/** `application/x-ndjson`: one JSON record per line; a line that is not JSON is one skipped entry. */
export function linesFromNdjson(text: string): ShippedLine[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return fromRecord(JSON.parse(line));
      } catch {
        return { skipped: true as const };
      }
    });
}

/** `text/plain`: raw syslog lines, one per line (blank lines are not entries). */
export function linesFromText(text: string): ShippedLine[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => ({ line }));
}

function fromRecord(record: unknown): ShippedLine {
  if (typeof record === 'string') return record.trim() ? { line: record } : { skipped: true };
  if (!isObject(record)) return { skipped: true };
  const line = firstString(record, LINE_FIELDS);
  if (line === undefined || line.trim() === '') return { skipped: true };
  const host = firstString(record, HOST_FIELDS);
  const at = timeOf(record);
  return { line, host: host || undefined, at };
}

/** Epoch numbers above this are milliseconds: as seconds they would be past the year 5000. */
const EPOCH_MS_ABOVE = 1e11;

/** ISO 8601 text, or an epoch number (a number or numeric text, fractions allowed) in seconds or milliseconds. */
function timeOf(record: Record<string, unknown>): Date | undefined {
  for (const field of TIME_FIELDS) {
    const value = record[field];
    let at: Date | undefined;
    if (typeof value === 'number' && Number.isFinite(value)) at = fromEpoch(value);
    else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) at = fromEpoch(Number(value));
    else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) at = new Date(value);
    if (at && !Number.isNaN(at.getTime())) return at;
  }
  return undefined;
}

const fromEpoch = (value: number): Date => new Date(value > EPOCH_MS_ABOVE ? value : value * 1000);

function firstString(record: Record<string, unknown>, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const value = record[field];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
