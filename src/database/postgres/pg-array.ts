const ARRAY_ELEMENT_SPECIALS = /["\\]/;
const ARRAY_ELEMENT_ESCAPES = /["\\]/g;

/**
 * A column's values for `$n::type[]`: PostgreSQL's array literal (`{"a","b",NULL}`), written here
 * because pg's own (two regular expressions on every element, and its own date formatting) cost
 * more than the statement for the log ingest's hundreds of rows; dates as ISO 8601 in UTC. Values
 * that are neither text, numbers, booleans nor dates (bytes) are left to pg: the array as it is.
 */
export function pgArray(values: readonly unknown[]): string | readonly unknown[] {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    let text: string;
    if (value === null || value === undefined) {
      parts[i] = 'NULL';
      continue;
    } else if (typeof value === 'string') text = value;
    else if (typeof value === 'number' || typeof value === 'bigint') text = String(value);
    else if (typeof value === 'boolean') text = value ? 't' : 'f';
    else if (value instanceof Date && !Number.isNaN(value.getTime())) text = value.toISOString();
    else return values;
    parts[i] = ARRAY_ELEMENT_SPECIALS.test(text)
      ? `"${text.replace(ARRAY_ELEMENT_ESCAPES, '\\$&')}"`
      : `"${text}"`;
  }
  return `{${parts.join(',')}}`;
}
