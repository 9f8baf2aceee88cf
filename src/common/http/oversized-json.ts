import { BadRequestException } from '@nestjs/common';

/**
 * No object of any request body has this many fields (the largest DTO has about 20). Beyond
 * it the body is refused without building the object: JSON.parse of a 1 MB object of 90,000
 * keys costs ~65 ms here and listing its keys ~27 ms more, over the 100 ms that README.md
 * "Bodies" allows for refusing it; one scan of the text costs ~4 ms.
 */
export const MAX_FIELDS_PER_OBJECT = 1000;
/** The shortest field, `"a":0,`, is 6 bytes: a shorter text cannot hold an object over the limit. */
const SCAN_FROM_LENGTH = MAX_FIELDS_PER_OBJECT * 6;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * What the JSON parser hands on instead of a top-level object with more than
 * MAX_FIELDS_PER_OBJECT fields: its field names, so the validation pipe can still say which
 * are unknown (20 of them, and how many more). Every reader of a body refuses it.
 */
export class OversizedJsonObject {
  constructor(readonly fieldNames: string[]) {}

  tooManyFields(): BadRequestException {
    return tooManyFields(this.fieldNames.length);
  }
}

const tooManyFields = (count: number) =>
  new BadRequestException(
    `Request body has an object with ${count} fields (at most ${MAX_FIELDS_PER_OBJECT})`,
  );

/**
 * Looks at JSON text (well-formed UTF-8, not yet parsed) for an object with too many fields.
 * Undefined when there is none and the text should be parsed; an OversizedJsonObject for a
 * top-level one; a 400 for a nested one. Linear in the length, one pass (two when oversized).
 */
export function checkFieldCounts(text: string): OversizedJsonObject | undefined {
  if (text.length < SCAN_FROM_LENGTH) return undefined;
  // Open objects' field counts, and -1 for open arrays (a colon outside strings is always an object's).
  const open: number[] = [];
  let topLevel = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Most of a body is inside strings (a log batch's lines): skipped to the closing quote.
      i = closingQuote(text, i + 1);
      if (i === -1) break;
    } else if (c === COLON && open.length > 0) open[open.length - 1]++;
    else if (c === OPEN) open.push(0);
    else if (c === OPEN_ARRAY) open.push(-1);
    else if (c === CLOSE || c === CLOSE_ARRAY) {
      const count = open.pop() ?? 0;
      if (count <= MAX_FIELDS_PER_OBJECT) continue;
      if (open.length > 0 || text.trimStart().charCodeAt(0) !== OPEN) throw tooManyFields(count);
      topLevel = count;
    }
  }
  if (topLevel === 0) return undefined;
  return new OversizedJsonObject(topLevelFieldNames(text));
}

/**
 * Where the string whose text starts at `from` ends: the next `"` after an even run of
 * backslashes (each escapes the character after it); -1 when the text ends first.
 */
function closingQuote(text: string, from: number): number {
  for (let at = text.indexOf('"', from); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (at - backslashes - 1 >= from && text.charCodeAt(at - backslashes - 1) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/** The names of the top-level object's fields, in order (a second pass over the text). */
function topLevelFieldNames(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      let escaped = false;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d === BACKSLASH) {
          escaped = true;
          end++;
        } else if (d === QUOTE) break;
      }
      if (depth === 1 && expectKey) {
        names.push(escaped ? decodeJsonString(text.slice(i, end + 1)) : text.slice(i + 1, end));
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN || c === OPEN_ARRAY) {
      depth++;
      expectKey = c === OPEN && depth === 1;
    } else if (c === CLOSE || c === CLOSE_ARRAY) depth--;
    else if (c === COMMA && depth === 1) expectKey = true;
  }
  return names;
}

function decodeJsonString(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    throw new BadRequestException('Malformed JSON in request body');
  }
}
