/**
 * The lines Postfix's SMTP client puts on the wire when a line is longer than
 * `smtp_line_length_limit` (integrations.md "Milter" → "Long lines"): the agent signs these
 * bytes, so the DKIM body hash and header signature verify at the receiver.
 *
 * Postfix 3.7 (`smtp_text_out` in src/smtp/smtp_proto.c, checked against a private instance
 * with a raw sink): a line longer than N = `smtp_line_length_limit` bytes leaves as its first N
 * bytes, CRLF, then continuation lines of a SPACE and the next N − 1 bytes, so every line on the
 * wire is at most N bytes; a line of exactly N bytes is not touched. Bytes, not characters: a
 * fold can split a UTF-8 sequence, and spaces and tabs are folded like any byte.
 *
 * One quirk comes from the queue file, whose records hold at most `line_length_limit` (2048)
 * bytes: a record that is full ends in REC_TYPE_CONT, and `smtp_text_out` writes the SPACE
 * after a fold that falls on the end of a CONT record even when nothing follows. So when a
 * line ends exactly on a fold point that is also a record end, one more line of a single SPACE
 * goes out (N = 990: a body line of 897,024 bytes; N = 2048: a body line of 2,048 bytes). Body
 * records are cut by smtpd from the wire line, dot-stuffing included: with DATA a line that
 * starts with "." has a first record of 2047 bytes of content. Header lines are re-cut by
 * cleanup, which writes a line of exactly 2048 bytes as one normal record: no quirk there.
 *
 * Not modelled: BDAT (CHUNKING) has no dot-stuffing, so its first record of a "."-line is 2048
 * bytes; the two differ only for a "."-line whose length meets the quirk above.
 */

/** Postfix's `line_length_limit` default: the longest queue-file record. */
export const POSTFIX_LINE_LENGTH_LIMIT = 2048;

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const CRLF = Buffer.from('\r\n');
const FOLD = Buffer.from('\r\n ');
const CR_ONLY = Buffer.from('\r');
const SPACE_LINE = Buffer.from('\r\n \r\n');
const EMPTY = Buffer.alloc(0);

export interface LineFoldingOptions {
  /** Postfix's `line_length_limit` (queue-file record size). */
  recordLimit?: number;
  /**
   * Where the text comes from: `body` (records cut by smtpd from DATA, a leading "." stuffed)
   * or `header` (records re-cut by cleanup).
   */
  part?: 'body' | 'header';
}

/** Throws unless `limit` is one Postfix can run with: 0 (no folding) or at least 2. */
export function checkLineLengthLimit(limit: number): void {
  // With 1, smtp_text_out loops for ever writing CRLF SPACE (a SPACE fills the whole line).
  if (!Number.isInteger(limit) || limit < 0 || limit === 1) {
    throw new RangeError(`smtp_line_length_limit must be 0 or an integer of at least 2, not ${limit}`);
  }
}

/**
 * A streaming transform from the text Postfix's milter client sends (CRLF line ends, chunks
 * cut anywhere) to the text Postfix's SMTP client sends for `limit` (0: unchanged). Keeps only
 * counters and at most one byte (a CR that may start a CRLF) between chunks.
 */
export class LineFolder {
  private readonly recordLimit: number;
  private readonly body: boolean;
  /** Bytes on the current output line, the SPACE of a continuation included. */
  private column = 0;
  /** Bytes of the current input line (its content, without dot-stuffing). */
  private lineLength = 0;
  /** Content bytes in the first record of the current line (2047 for a stuffed "."). */
  private firstRecord = 0;
  private pendingCr = false;

  constructor(
    readonly limit: number,
    options: LineFoldingOptions = {},
  ) {
    checkLineLengthLimit(limit);
    this.recordLimit = options.recordLimit ?? POSTFIX_LINE_LENGTH_LIMIT;
    this.body = (options.part ?? 'body') === 'body';
  }

  /** The output for the next chunk of input. */
  push(chunk: Buffer): Buffer {
    if (this.limit === 0 || chunk.length === 0) return chunk;
    const out: Buffer[] = [];
    let i = 0;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (chunk[0] === LF) {
        this.lineEnd(out);
        i = 1;
      } else {
        this.content(out, CR_ONLY);
      }
    }
    while (i < chunk.length) {
      const crlf = chunk.indexOf(CRLF, i);
      if (crlf === -1) {
        let end = chunk.length;
        if (chunk[end - 1] === CR) {
          end -= 1;
          this.pendingCr = true;
        }
        this.content(out, chunk.subarray(i, end));
        break;
      }
      this.content(out, chunk.subarray(i, crlf));
      this.lineEnd(out);
      i = crlf + 2;
    }
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** The output still held back at the end of the input (a last CR, when the text ends in one). */
  end(): Buffer {
    if (!this.pendingCr) return EMPTY;
    this.pendingCr = false;
    const out: Buffer[] = [];
    this.content(out, CR_ONLY);
    return Buffer.concat(out);
  }

  private content(out: Buffer[], bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.lineLength === 0) {
      // smtpd reads `recordLimit` bytes of the wire line; the stuffed "." is one of them.
      this.firstRecord = this.body && bytes[0] === DOT ? this.recordLimit - 1 : this.recordLimit;
    }
    this.lineLength += bytes.length;
    let at = 0;
    while (at < bytes.length) {
      if (this.column === this.limit) {
        out.push(FOLD);
        this.column = 1;
      }
      const take = Math.min(this.limit - this.column, bytes.length - at);
      out.push(take === bytes.length ? bytes : bytes.subarray(at, at + take));
      this.column += take;
      at += take;
    }
  }

  private lineEnd(out: Buffer[]): void {
    // The line filled its last output line and its last record: that record was a full (CONT)
    // one, followed by an empty normal record, and Postfix wrote the SPACE of a continuation.
    const past = this.lineLength - this.firstRecord;
    const endsOnFullRecord = this.body && this.lineLength > 0 && past >= 0 && past % this.recordLimit === 0;
    out.push(this.column === this.limit && endsOnFullRecord ? SPACE_LINE : CRLF);
    this.column = 0;
    this.lineLength = 0;
  }
}

/** A whole text (CRLF line ends) as Postfix sends it for `limit`. */
export function foldText(text: Buffer, limit: number, options: LineFoldingOptions = {}): Buffer {
  const folder = new LineFolder(limit, options);
  const head = folder.push(text);
  const tail = folder.end();
  return tail.length ? Buffer.concat([head, tail]) : head;
}

/** A header block (`Name: value` lines and their continuation lines, CRLF) as Postfix sends it. */
export function foldHeaderBlock(
  block: Buffer,
  limit: number,
  recordLimit = POSTFIX_LINE_LENGTH_LIMIT,
): Buffer {
  return foldText(block, limit, { recordLimit, part: 'header' });
}
