import { isoString } from '../../common/iso-string';

const ARRAY_ELEMENT_ESCAPES = /["\\]/g;

/** Text with neither `"` nor `\`: an array element as it is, between quotes. */
const plain = (text: string): boolean => text.indexOf('"') === -1 && text.indexOf('\\') === -1;

/** An array element's text, quoted, with `"` and `\` escaped (most have neither: no regular expression then). */
const quoted = (text: string): string =>
  plain(text) ? `"${text}"` : `"${text.replace(ARRAY_ELEMENT_ESCAPES, '\\$&')}"`;

/**
 * A JSON escape other than `\"` and `\\` (a control character's, a lone surrogate's): the array
 * literal reads `\x` as `x`, so JSON text holding one is not that literal. It also finds a text's
 * own backslash before a letter (JSON's `\\n`), whose column is then written value by value too.
 */
const OTHER_JSON_ESCAPE = /\\[^"\\]/;

/**
 * A column's values for `$n::type[]`: PostgreSQL's array literal (`{"a",1,NULL}`), written here
 * because pg's own (two regular expressions on every element, and its own date formatting) cost
 * more than the statement for the log ingest's hundreds of rows; dates as ISO 8601 in UTC. Values
 * that are neither text, numbers, booleans nor dates (bytes) are left to pg: the array as it is.
 *
 * A column of text and nulls (most of them) is JSON.stringify's array with braces for brackets:
 * JSON quotes each text and escapes `"` and `\` as the literal does, and its `null` is the
 * literal's NULL (read without regard to case); one native pass instead of one check a value.
 * JSON escapes anything else (control characters, lone surrogates) in a way the literal does not:
 * such a column is written value by value (OTHER_JSON_ESCAPE).
 */
export function pgArray(values: readonly unknown[]): string | readonly unknown[] {
  if (allTextOrNull(values)) {
    const json = JSON.stringify(values);
    if (!OTHER_JSON_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  }
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

/** Every value text, null or undefined (JSON.stringify writes undefined in an array as null). */
function allTextOrNull(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'string' && value !== null && value !== undefined) return false;
  }
  return true;
}
