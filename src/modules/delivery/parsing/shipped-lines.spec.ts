import { linesFromJson, linesFromNdjson, linesFromText } from './shipped-lines';

const LINE = 'Nov 21 18:58:35 mx1 postfix/qmgr[15878]: AA10A2839B: removed';

describe('linesFromJson', () => {
  it('reads a Fluent Bit record (`log`, `hostname`, epoch seconds with a fraction)', () => {
    expect(linesFromJson([{ date: 1763751515.25, log: LINE, hostname: 'mx1' }])).toEqual([
      { line: LINE, host: 'mx1', at: new Date(1763751515250) },
    ]);
  });

  it('reads a Vector array (`message`, `host`, ISO `timestamp`)', () => {
    expect(linesFromJson([{ message: LINE, host: 'mx1', timestamp: '2026-11-21T18:58:35.123Z' }])).toEqual([
      { line: LINE, host: 'mx1', at: new Date('2026-11-21T18:58:35.123Z') },
    ]);
  });

  it('reads a Logstash json_batch and `{ logs: [...] }` (`@timestamp`, `MESSAGE`)', () => {
    expect(linesFromJson({ logs: [{ '@timestamp': '2026-11-21T18:58:35Z', MESSAGE: LINE }] })).toEqual([
      { line: LINE, at: new Date('2026-11-21T18:58:35Z') },
    ]);
  });

  it('reads one record alone, and a numeric-text time', () => {
    expect(linesFromJson({ message: LINE, time: '1763751515' })).toEqual([
      { line: LINE, at: new Date(1763751515000) },
    ]);
  });

  it('reads an epoch number above 10^11 as milliseconds, a smaller one as seconds', () => {
    expect(
      linesFromJson([
        { message: LINE, timestamp: 1764000000000 },
        { message: LINE, timestamp: '1764000000123' },
        { message: LINE, timestamp: 1764000000123.5 },
        { message: LINE, timestamp: 1764000000 },
        { message: LINE, timestamp: '99999999999' },
        { message: LINE, timestamp: 100000000001 },
      ]),
    ).toEqual([
      { line: LINE, at: new Date('2025-11-24T16:00:00.000Z') },
      { line: LINE, at: new Date('2025-11-24T16:00:00.123Z') },
      { line: LINE, at: new Date(1764000000123.5) },
      { line: LINE, at: new Date('2025-11-24T16:00:00.000Z') },
      { line: LINE, at: new Date(99999999999000) },
      { line: LINE, at: new Date(100000000001) },
    ]);
  });

  it('keeps unusable records as skipped entries, and ignores a time it cannot read', () => {
    expect(
      linesFromJson([{ nope: 1 }, null, 42, { message: '' }, { message: LINE, timestamp: 'yesterday' }]),
    ).toEqual([{ skipped: true }, { skipped: true }, { skipped: true }, { skipped: true }, { line: LINE }]);
  });
});

describe('linesFromNdjson', () => {
  it('reads one record per line, CRLF too; a bad line is one skipped entry', () => {
    const text = `{"log":"${LINE}"}\r\nnot json\n\n{"message":"${LINE}","host":"mx2"}\n`;
    expect(linesFromNdjson(text)).toEqual([{ line: LINE }, { skipped: true }, { line: LINE, host: 'mx2' }]);
  });
});

describe('linesFromText', () => {
  it('reads one syslog line per line and ignores blank ones', () => {
    expect(linesFromText(`${LINE}\r\n\n${LINE}\n   \n`)).toEqual([{ line: LINE }, { line: LINE }]);
  });
});
