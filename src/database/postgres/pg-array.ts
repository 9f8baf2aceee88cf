import { isoString } from '../../common/iso-string';

const ARRAY_ELEMENT_ESCAPES = /["\\]/g;

/** Text with neither `"` nor `\`: an array element as it is, between quotes. */
const plain = (text: string): boolean => text.indexOf('"') === -1 && text.indexOf('\\') === -1;

/** An array element's text, quoted, with `"` and `\` escaped (most have neither: no regular expression then). */
const quoted = (text: string): string =>
  plain(text) ? `"${text}"` : `"${text.replace(ARRAY_ELEMENT_ESCAPES, '\\$&')}"`;

/**
 * A column's values for `$n::type[]`: PostgreSQL's array literal (`{"a",1,NULL}`), written here
 * because pg's own (two regular expressions on every element, and its own date formatting) cost
 * more than the statement for the log ingest's hundreds of rows; dates as ISO 8601 in UTC. Values
 * that are neither text, numbers, booleans nor dates (bytes) are left to pg: the array as it is.
 */
export function pgArray(values: readonly unknown[]): string | readonly unknown[] {
  if (values.length > 0 && allPlainText(values)) return `{"${values.join('","')}"}`;
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (typeof value === 'string') parts[i] = quoted(value);
    else if (typeof value === 'number' || typeof value === 'bigint') parts[i] = String(value);
    else if (typeof value === 'boolean') parts[i] = value ? 't' : 'f';
    else if (value instanceof Date && !Number.isNaN(value.getTime())) parts[i] = isoString(value);
    else return values;
  }
  return `{${parts.join(',')}}`;
}

/** Every value plain text (most columns of a batch): then one native join writes the literal. */
function allPlainText(values: readonly unknown[]): values is readonly string[] {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'string' || !plain(value)) return false;
  }
  return true;
}
