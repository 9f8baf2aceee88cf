import fc from 'fast-check';
import { createPrivateKey } from 'node:crypto';
import { BodyHash, dkimSignature } from './dkim-signature';
import {
  checkLineLengthLimit,
  foldHeaderBlock,
  foldText,
  LineFolder,
  LineFoldingOptions,
} from './line-folding';
import { deliveredMessage, dkimResults, dkimTestKey } from '../../../test/support/relay-agent/dkim-test-key';
import { markedLine } from '../../../test/support/relay-agent/marked-line';

/**
 * A line as it arrived at the sink, from the lengths of its lines on the wire (what
 * Postfix 3.7.11 sent, dot-stuffing removed): the first line, then a SPACE and the next bytes.
 */
function arrived(line: Buffer, wireLengths: number[]): Buffer {
  const parts = [line.subarray(0, wireLengths[0]), Buffer.from('\r\n')];
  let at = wireLengths[0];
  for (const length of wireLengths.slice(1)) {
    parts.push(Buffer.from(' '), line.subarray(at, at + length - 1), Buffer.from('\r\n'));
    at += length - 1;
  }
  expect(at).toBe(line.length);
  return Buffer.concat(parts);
}

/** Buffer equality (toEqual walks a large Buffer byte by byte, slowly); on a difference, where. */
function expectBytes(got: Buffer, want: Buffer): void {
  if (got.equals(want)) return;
  let at = 0;
  while (at < got.length && got[at] === want[at]) at++;
  const around = (b: Buffer) => JSON.stringify(b.subarray(Math.max(0, at - 20), at + 20).toString('latin1'));
  throw new Error(
    `bytes differ at ${at} (lengths ${got.length}, ${want.length}): ${around(got)} vs ${around(want)}`,
  );
}

const body = (line: Buffer | string) => Buffer.concat([Buffer.from(line), Buffer.from('\r\n')]);

/** The same text fed in pieces cut at `cuts`. */
function fedInPieces(text: Buffer, limit: number, cuts: number[], options: LineFoldingOptions = {}): Buffer {
  const folder = new LineFolder(limit, options);
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b).concat(text.length)) {
    parts.push(folder.push(text.subarray(from, cut)));
    from = cut;
  }
  parts.push(folder.end());
  return Buffer.concat(parts);
}

/**
 * Postfix's own steps, transcribed: smtpd cuts each line of the wire (DATA, a leading "."
 * stuffed) into records of at most `recordLimit` bytes, CONT when full, then NORM (maybe empty);
 * cleanup re-cuts a header line, CONT only when more follows; smtp_text_out
 * (src/smtp/smtp_proto.c) writes the records. The receiver's unstuffing is assumed.
 */
function postfixReference(text: Buffer, limit: number, recordLimit: number, part: 'body' | 'header'): Buffer {
  const out: Buffer[] = [];
  let spaceLeft = limit;
  const textOut = (cont: boolean, data: Buffer) => {
    let at = 0;
    let left = data.length;
    do {
      if (limit > 0 && left >= spaceLeft) {
        out.push(data.subarray(at, at + spaceLeft), Buffer.from('\r\n'));
        at += spaceLeft;
        left -= spaceLeft;
        spaceLeft = limit;
        if (left > 0 || cont) {
          out.push(Buffer.from(' '));
          spaceLeft -= 1;
        }
      } else {
        out.push(data.subarray(at));
        if (cont) spaceLeft -= left;
        else {
          out.push(Buffer.from('\r\n'));
          spaceLeft = limit;
        }
        break;
      }
    } while (left > 0);
  };
  let from = 0;
  for (let end = text.indexOf('\r\n'); end !== -1; end = text.indexOf('\r\n', from)) {
    const line = text.subarray(from, end);
    from = end + 2;
    if (part === 'header') {
      let at = 0;
      while (line.length - at > recordLimit) {
        textOut(true, line.subarray(at, at + recordLimit));
        at += recordLimit;
      }
      textOut(false, line.subarray(at));
      continue;
    }
    const wire = line[0] === 0x2e ? Buffer.concat([Buffer.from('.'), line]) : line;
    let at = 0;
    for (let first = true; ; first = false) {
      const full = wire.length - at >= recordLimit;
      let record = wire.subarray(at, full ? at + recordLimit : wire.length);
      at += record.length;
      if (first && record[0] === 0x2e) record = record.subarray(1);
      textOut(full, record);
      if (!full) break;
    }
  }
  return Buffer.concat(out);
}

describe('LineFolder: what Postfix 3.7 sent (private instance, smtp_line_length_limit 998 and 990)', () => {
  // [line, wire line lengths at 998, at 990]
  const observed: Array<[string, string, number[], number[]]> = [
    ['998 characters', markedLine(998), [998], [990, 9]],
    ['999 characters', markedLine(999), [998, 2], [990, 10]],
    ['1,000 characters', markedLine(1000), [998, 3], [990, 11]],
    ['1,500 characters', markedLine(1500), [998, 503], [990, 511]],
    ['1,998 characters', markedLine(1998), [998, 998, 4], [990, 990, 20]],
    ['2,047 characters', markedLine(2047), [998, 998, 53], [990, 990, 69]],
    ['2,048 characters (one full queue-file record)', markedLine(2048), [998, 998, 54], [990, 990, 70]],
    ['2,049 characters', markedLine(2049), [998, 998, 55], [990, 990, 71]],
    ['4,096 characters', markedLine(4096), [998, 998, 998, 998, 108], [990, 990, 990, 990, 140]],
    ['5,000 characters', markedLine(5000), [998, 998, 998, 998, 998, 15], [990, 990, 990, 990, 990, 55]],
    ['1,500 starting with "."', '.' + markedLine(1499), [998, 503], [990, 511]],
    ['2,047 starting with "."', '.' + markedLine(2046), [998, 998, 53], [990, 990, 69]],
    ['2,048 starting with "."', '.' + markedLine(2047), [998, 998, 54], [990, 990, 70]],
    [
      '5,000 starting with "."',
      '.' + markedLine(4999),
      [998, 998, 998, 998, 998, 15],
      [990, 990, 990, 990, 990, 55],
    ],
    ['spaces and tabs at the end', 'a'.repeat(985) + ' \t'.repeat(10), [998, 8], [990, 16]],
    ['20 spaces at the end', 'b'.repeat(1500) + ' '.repeat(20), [998, 523], [990, 531]],
    ['tabs where it folds', 'c'.repeat(990) + '\t'.repeat(9) + 'd', [998, 3], [990, 11]],
    ['spaces inside', 'e'.repeat(1977) + '   ' + 'f'.repeat(10), [998, 993], [990, 990, 12]],
    ['750 "é" (1,500 bytes)', 'é'.repeat(750), [998, 503], [990, 511]],
    ['"é" split by the fold', 'a'.repeat(989) + 'é'.repeat(300), [998, 592], [990, 600]],
    [
      '2,500 "ü" (5,000 bytes)',
      'ü'.repeat(2500),
      [998, 998, 998, 998, 998, 15],
      [990, 990, 990, 990, 990, 55],
    ],
  ];

  it.each(observed)('a line of %s', (_name, text, at998, at990) => {
    const line = Buffer.from(text);
    expectBytes(foldText(body(line), 998), arrived(line, at998));
    expectBytes(foldText(body(line), 990), arrived(line, at990));
  });

  it('folds a 5,000- and a 1,500-character line between short ones, every line at most 990 bytes', () => {
    const text = Buffer.from(`start\r\n${markedLine(5000)}\r\n--\r\n${markedLine(1500)}\r\nend\r\n`);
    const folded = foldText(text, 990);
    const lines = folded.toString().split('\r\n');
    expect(lines.map((l) => l.length)).toEqual([5, 990, 990, 990, 990, 990, 55, 2, 990, 511, 3, 0]);
    expect(lines.slice(2, 6).every((l) => l.startsWith(' '))).toBe(true);
    // Unfolded, it is the text again.
    expect(folded.toString().replace(/\r\n /g, '')).toBe(text.toString());
  });

  it('leaves the text alone with limit 0 (Postfix does not fold) and short lines at any limit', () => {
    const text = Buffer.from(`${markedLine(5000)}\r\n.${markedLine(3000)}\r\n`);
    expectBytes(foldText(text, 0), text);
    const short = Buffer.from('Hello,\r\n\r\n  indented \t\r\n.\r\n..\r\n');
    expectBytes(foldText(short, 990), short);
  });

  it('folds header lines the same way (X-Long: 1,200 characters, X-Long5k: 5,002)', () => {
    const long = `X-Long: ${'H'.repeat(1192)}`;
    const long5k = `X-Long5k: ${markedLine(4992)}`;
    const block = Buffer.from(`Subject: hi\r\n${long}\r\n${long5k}\r\n`);
    const sub = Buffer.from('Subject: hi\r\n');
    expectBytes(
      foldHeaderBlock(block, 998),
      Buffer.concat([
        sub,
        arrived(Buffer.from(long), [998, 203]),
        arrived(Buffer.from(long5k), [998, 998, 998, 998, 998, 17]),
      ]),
    );
    expectBytes(
      foldHeaderBlock(block, 990),
      Buffer.concat([
        sub,
        arrived(Buffer.from(long), [990, 211]),
        arrived(Buffer.from(long5k), [990, 990, 990, 990, 990, 57]),
      ]),
    );
  });
});

describe('LineFolder: a fold on the end of a full queue-file record (what Postfix 3.7 sent)', () => {
  // [limit, line, wire line lengths]: a last length of 1 is the line of a single SPACE.
  const observed: Array<[number, string, number[]]> = [
    [2048, markedLine(2048), [2048, 1]],
    [2048, markedLine(2047), [2047]],
    [2048, markedLine(4096), [2048, 2048, 2]],
    [2048, '.' + markedLine(2046), [2047]],
    [2048, '.' + markedLine(2047), [2048]],
    [2047, markedLine(2048), [2047, 2]],
    [2047, markedLine(2047), [2047]],
    [2047, '.' + markedLine(2046), [2047, 1]], // with DATA the "." takes a byte of the first record
    [2047, '.' + markedLine(2047), [2047, 2]],
    [1366, markedLine(4096), [1366, 1366, 1366, 1]],
    [1366, markedLine(2048), [1366, 683]],
    [1366, '.' + markedLine(2046), [1366, 682]],
    [990, 'h'.repeat(897_024), [990, ...new Array<number>(906).fill(990), 1]],
    [990, 'i'.repeat(897_023), [990, ...new Array<number>(905).fill(990), 989]],
  ];

  it.each(observed)('limit %d, a body line %#', (limit, text, wireLengths) => {
    const line = Buffer.from(text);
    expectBytes(foldText(body(line), limit), arrived(line, wireLengths));
  });

  it('not in a header line, which cleanup writes as one normal record of 2,048 bytes (X-Edge)', () => {
    const edge = Buffer.from(`X-Edge: ${'E'.repeat(2040)}`);
    const edge2 = Buffer.from(`X-Edge2: ${'F'.repeat(4088)}`);
    expectBytes(foldHeaderBlock(body(edge), 2048), arrived(edge, [2048]));
    expectBytes(foldHeaderBlock(body(edge2), 2048), arrived(edge2, [2048, 2048, 3]));
    expectBytes(foldHeaderBlock(body(edge), 2047), arrived(edge, [2047, 2]));
    expectBytes(foldHeaderBlock(body(edge2), 1366), arrived(edge2, [1366, 1366, 1366, 2]));
  });
});

describe('LineFolder: chunks', () => {
  it('gives the same bytes however the text is cut, 65,535-byte chunks or single bytes', () => {
    const text = Buffer.from(
      `a\r\n${markedLine(5000)}\r\n.${'é'.repeat(3000)}\r\nx\ry\r\n${'h'.repeat(897_024)}\r\n\r\n`,
    );
    const whole = foldText(text, 990);
    const cuts = (size: number) =>
      Array.from({ length: Math.floor(text.length / size) }, (_, i) => (i + 1) * size);
    expectBytes(fedInPieces(text, 990, cuts(65_535)), whole);
    expectBytes(fedInPieces(text, 990, cuts(1).slice(0, 20_000)), whole);
  });

  it('keeps a CR at the end of a chunk until it knows whether a LF follows', () => {
    const folder = new LineFolder(4);
    expect(folder.push(Buffer.from('abcdef\r')).toString()).toBe('abcd\r\n ef');
    expect(folder.push(Buffer.from('\nxy\r')).toString()).toBe('\r\nxy');
    expect(folder.push(Buffer.from('z')).toString()).toBe('\rz');
    expect(folder.push(Buffer.from('\r')).toString()).toBe('');
    expect(folder.end().toString()).toBe('\r\n \r');
  });

  const bodyText = fc
    .array(
      fc.oneof(
        fc.constantFrom('\r\n', '\r', '.', ' ', '\t', 'é', '\r\n.', '\r\n '),
        fc.integer({ min: 0, max: 60 }).map((n) => 'x'.repeat(n)),
        fc.integer({ min: 0, max: 3000 }).map(markedLine),
      ),
      { maxLength: 30 },
    )
    .map((parts) => Buffer.from(parts.join('')));

  it('property: text cut anywhere gives the text whole (fast-check)', () => {
    fc.assert(
      fc.property(
        bodyText,
        fc.constantFrom(0, 2, 3, 7, 990, 998, 2047, 2048),
        fc.array(fc.nat(), { maxLength: 12 }),
        (text, limit, cuts) => {
          const pieces = cuts.map((c) => c % (text.length + 1));
          expectBytes(fedInPieces(text, limit, pieces), foldText(text, limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: the same bytes as Postfix's own steps, transcribed, small records included (fast-check)", () => {
    const lines = fc
      .array(
        fc.oneof(fc.stringMatching(/^[.a-z \t]{0,40}$/), fc.integer({ min: 0, max: 6000 }).map(markedLine)),
        {
          maxLength: 12,
        },
      )
      .map((ls) => Buffer.from(ls.map((l) => `${l}\r\n`).join('')));
    fc.assert(
      fc.property(
        lines,
        fc.integer({ min: 2, max: 2100 }),
        fc.constantFrom(3, 4, 5, 8, 50, 2048),
        fc.constantFrom<'body' | 'header'>('body', 'header'),
        fc.array(fc.nat(), { maxLength: 6 }),
        (text, limit, recordLimit, part, cuts) => {
          const want = postfixReference(text, limit, recordLimit, part);
          const pieces = cuts.map((c) => c % (text.length + 1));
          expectBytes(fedInPieces(text, limit, pieces, { recordLimit, part }), want);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('checkLineLengthLimit', () => {
  it('takes 0 and 2 upward, as Postfix runs with them (1 would loop for ever in smtp_text_out)', () => {
    for (const ok of [0, 2, 990, 998, 100_000]) expect(() => checkLineLengthLimit(ok)).not.toThrow();
    for (const bad of [1, -1, 2.5, Number.NaN]) expect(() => new LineFolder(bad)).toThrow(RangeError);
  });
});

describe('signing what Postfix will send (BodyHash and dkimSignature with the limit)', () => {
  const key = dkimTestKey();
  const dns = { 'sel._domainkey.acme.test': `v=DKIM1; k=rsa; p=${key.publicKey}` };
  const headers: Array<[string, string]> = [
    ['From', 'News <news@acme.test>'],
    ['To', 'jo@example.net'],
    ['Subject', `Long ${'s'.repeat(1500)}`],
    ['X-Long', 'H'.repeat(1192)],
  ];
  const text = Buffer.from(
    `Hello\r\n${markedLine(5000)}\r\n.${'é'.repeat(750)}\r\n${markedLine(1500)}   \r\nbye\r\n`,
  );

  /** The signature made at `signedFor`, then the message as Postfix sends it at `sentAt`. */
  async function signedAndSent(signedFor: number, sentAt: number): Promise<Buffer> {
    const hash = new BodyHash(signedFor);
    for (let at = 0; at < text.length; at += 1000) hash.update(text.subarray(at, at + 1000));
    const block = Buffer.from(headers.map(([n, v]) => `${n}: ${v}\r\n`).join(''));
    const privateKey = createPrivateKey(key.privateKeyPem);
    const signature = await dkimSignature(
      block,
      hash.digest(),
      { domain: 'acme.test', selector: 'sel', privateKey },
      new Date(),
      signedFor,
    );
    const message = deliveredMessage([signature], headers, text);
    const split = message.indexOf('\r\n\r\n') + 2;
    return Buffer.concat([
      foldHeaderBlock(message.subarray(0, split), sentAt),
      foldText(message.subarray(split), sentAt),
    ]);
  }

  it('verifies at the receiver when the agent signs for the limit Postfix folds at', async () => {
    expect(await dkimResults(await signedAndSent(990, 990), dns)).toEqual([
      expect.objectContaining({ domain: 'acme.test', result: 'pass' }),
    ]);
    expect(await dkimResults(await signedAndSent(0, 0), dns)).toEqual([
      expect.objectContaining({ result: 'pass' }),
    ]);
  });

  it('fails (body hash did not verify) when the agent signs the body as it came (limit 0) and Postfix folds', async () => {
    expect(await dkimResults(await signedAndSent(0, 990), dns)).toEqual([
      expect.objectContaining({ result: 'neutral', comment: 'body hash did not verify' }),
    ]);
  });
});
