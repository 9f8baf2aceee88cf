import {
  decodeBase64,
  handshake,
  LineReader,
  parsePlain,
  SaslProtocolError,
  SaslSession,
  SaslStep,
} from './sasl-protocol';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const AUTH = 'service=smtp\tnologin\tlip=127.0.0.1\trip=192.0.2.7';

function run(lines: string[]): SaslStep[] {
  const session = new SaslSession();
  return lines.map((line) => session.handle(line));
}

describe('handshake', () => {
  it('is VERSION, the MECH lines, SPID, CUID, COOKIE and DONE, in that order', () => {
    expect(handshake(4242, 7, 'ab'.repeat(16))).toBe(
      'VERSION\t1\t2\nMECH\tPLAIN\tplaintext\nMECH\tLOGIN\tplaintext\nSPID\t4242\nCUID\t7\n' +
        `COOKIE\t${'ab'.repeat(16)}\nDONE\n`,
    );
  });
});

describe('LineReader', () => {
  it('cuts LF-terminated lines wherever the chunks split them', () => {
    const text = 'VERSION\t1\t0\nCPID\t99\n\nAUTH\t1\tPLAIN\n';
    for (let split = 0; split <= text.length; split++) {
      const reader = new LineReader();
      const lines: string[] = [];
      for (const part of [text.slice(0, split), text.slice(split)]) {
        reader.push(Buffer.from(part));
        for (let line = reader.next(); line !== null; line = reader.next()) lines.push(line);
      }
      expect(lines).toEqual(['VERSION\t1\t0', 'CPID\t99', '', 'AUTH\t1\tPLAIN']);
    }
  });

  it('takes a line of 16 KiB and refuses one byte more, before its LF arrives', () => {
    const reader = new LineReader();
    reader.push(Buffer.from('x'.repeat(16 * 1024) + '\n'));
    expect(reader.next()).toHaveLength(16 * 1024);
    reader.push(Buffer.from('y'.repeat(16 * 1024)));
    expect(reader.next()).toBeNull();
    reader.push(Buffer.from('y'));
    expect(() => reader.next()).toThrow(SaslProtocolError);
  });

  it('refuses an over-long line that arrives whole with its LF', () => {
    const reader = new LineReader();
    reader.push(Buffer.from('z'.repeat(16 * 1024 + 1) + '\nCPID\t1\n'));
    expect(() => reader.next()).toThrow(SaslProtocolError);
  });
});

describe('SaslSession', () => {
  it('ignores the client handshake and refuses another major version', () => {
    expect(run(['VERSION\t1\t0', 'CPID\t1234'])).toEqual([null, null]);
    expect(() => run(['VERSION\t2\t0'])).toThrow(SaslProtocolError);
  });

  it('PLAIN with an initial response asks for the check at once', () => {
    expect(run([`AUTH\t1\tPLAIN\t${AUTH}\tsecured\tresp=${b64('\0r-abc\0s3cret')}`])).toEqual([
      {
        check: {
          id: '1',
          mechanism: 'PLAIN',
          username: 'r-abc',
          password: 's3cret',
          clientAddress: '192.0.2.7',
        },
      },
    ]);
  });

  it('PLAIN without one answers CONT with an empty third field, then takes the response', () => {
    const [cont, check] = run([`AUTH\t2\tPLAIN\t${AUTH}`, `CONT\t2\t${b64('r-abc\0r-abc\0pw')}`]);
    expect(cont).toEqual({ reply: 'CONT\t2\t\n' });
    expect(check).toMatchObject({ check: { id: '2', username: 'r-abc', password: 'pw' } });
  });

  it('LOGIN prompts for the username, then the password', () => {
    expect(run([`AUTH\t3\tLOGIN\t${AUTH}`, `CONT\t3\t${b64('R-ABC')}`, `CONT\t3\t${b64('pw')}`])).toEqual([
      { reply: 'CONT\t3\tVXNlcm5hbWU6\n' },
      { reply: 'CONT\t3\tUGFzc3dvcmQ6\n' },
      {
        check: { id: '3', mechanism: 'LOGIN', username: 'R-ABC', password: 'pw', clientAddress: '192.0.2.7' },
      },
    ]);
  });

  it("LOGIN's initial response is the username", () => {
    expect(run([`AUTH\t4\tlogin\t${AUTH}\tresp=${b64('r-abc')}`, `CONT\t4\t${b64('pw')}`])).toEqual([
      { reply: 'CONT\t4\tUGFzc3dvcmQ6\n' },
      {
        check: { id: '4', mechanism: 'LOGIN', username: 'r-abc', password: 'pw', clientAddress: '192.0.2.7' },
      },
    ]);
  });

  it('a new AUTH drops the unfinished one: its CONT then fails', () => {
    expect(
      run([
        `AUTH\t5\tLOGIN\t${AUTH}`,
        `CONT\t5\t${b64('r-abc')}`,
        `AUTH\t6\tPLAIN\t${AUTH}\tresp=${b64('\0r-abc\0pw')}`,
        `CONT\t5\t${b64('pw')}`,
      ]),
    ).toEqual([
      { reply: 'CONT\t5\tVXNlcm5hbWU6\n' },
      { reply: 'CONT\t5\tUGFzc3dvcmQ6\n' },
      { check: expect.objectContaining({ id: '6', username: 'r-abc' }) },
      {
        reply: 'FAIL\t5\treason=Authentication failed\n',
        refused: { reason: 'no conversation with this id' },
      },
    ]);
  });

  const rip = '192.0.2.7';
  it.each([
    [
      'impersonation (authzid is another user)',
      `AUTH\t7\tPLAIN\t${AUTH}\tresp=${b64('r-boss\0r-abc\0pw')}`,
      {
        reason: 'authorization identity is another user',
        username: 'r-abc',
        mechanism: 'PLAIN',
        clientAddress: rip,
      },
    ],
    [
      'a PLAIN response without its NULs',
      `AUTH\t7\tPLAIN\t${AUTH}\tresp=${b64('r-abc pw')}`,
      { reason: 'malformed PLAIN response', mechanism: 'PLAIN', clientAddress: rip },
    ],
    [
      'a PLAIN response with a NUL too many',
      `AUTH\t7\tPLAIN\t${AUTH}\tresp=${b64('\0r-abc\0pw\0')}`,
      { reason: 'malformed PLAIN response', mechanism: 'PLAIN', clientAddress: rip },
    ],
    [
      'an empty password',
      `AUTH\t7\tPLAIN\t${AUTH}\tresp=${b64('\0r-abc\0')}`,
      { reason: 'empty username or password', username: 'r-abc', mechanism: 'PLAIN', clientAddress: rip },
    ],
    [
      'base64 that is not',
      `AUTH\t7\tPLAIN\t${AUTH}\tresp=AB*D`,
      { reason: 'invalid base64', mechanism: 'PLAIN', clientAddress: rip },
    ],
    [
      'a mechanism not offered',
      `AUTH\t7\tCRAM-MD5\t${AUTH}`,
      { reason: 'mechanism not offered', mechanism: 'CRAM-MD5', clientAddress: rip },
    ],
    ['a CONT for no conversation', `CONT\t7\t${b64('x')}`, { reason: 'no conversation with this id' }],
  ])('fails without a check: %s', (_name, line, refused) => {
    expect(run([line])).toEqual([{ reply: 'FAIL\t7\treason=Authentication failed\n', refused }]);
  });

  it('accepts an authzid equal to the authcid in another case', () => {
    expect(run([`AUTH\t8\tPLAIN\t${AUTH}\tresp=${b64('R-ABC\0r-abc\0pw')}`])).toEqual([
      { check: expect.objectContaining({ username: 'r-abc', password: 'pw' }) },
    ]);
  });

  it('closes on a request without a numeric id', () => {
    expect(() => run(['AUTH\tx\tPLAIN'])).toThrow(SaslProtocolError);
    expect(() => run(['CONT'])).toThrow(SaslProtocolError);
  });
});

describe('decoding', () => {
  it('takes strict base64 only', () => {
    expect(decodeBase64('cHc=')?.toString()).toBe('pw');
    expect(decodeBase64('')?.length).toBe(0);
    expect(decodeBase64('cHc')).toBeNull();
    expect(decodeBase64('cH c=')).toBeNull();
  });

  it('parses PLAIN as authzid NUL authcid NUL password', () => {
    expect(parsePlain(Buffer.from('\0u\0p\u00e9'))).toEqual({ username: 'u', password: 'p\u00e9' });
    expect(parsePlain(Buffer.from('\0\0p'))).toEqual({ reason: 'empty username or password', username: '' });
  });
});
