import {
  cStrings,
  decodeConnect,
  decodeMacros,
  encodeFrame,
  FrameReader,
  insertHeader,
  MAX_MILTER_FRAME_BYTES,
  MilterProtocolError,
  replyCode,
} from './milter-protocol';

describe('milter codec', () => {
  const frames = [
    encodeFrame('O', Buffer.from('00000006000001ff001fffff', 'hex')),
    encodeFrame(
      'D',
      Buffer.concat([Buffer.from('M'), cStrings('{auth_authen}', 'r-acme', 'i', 'C913716C112')]),
    ),
    encodeFrame('B', Buffer.alloc(65535, 0x61)),
    encodeFrame('E'),
  ];
  const stream = Buffer.concat(frames);

  it('cuts frames out of packets split at every byte, and out of one pipelined packet', () => {
    for (const size of [1, 2, 3, 5, 4096, stream.length]) {
      const reader = new FrameReader(1024 * 1024);
      const got: string[] = [];
      for (let at = 0; at < stream.length; at += size) {
        reader.push(stream.subarray(at, at + size));
        for (let f = reader.next(); f; f = reader.next()) got.push(`${f.command}:${f.data.length}`);
      }
      expect(got).toEqual(['O:12', 'D:36', 'B:65535', 'E:0']);
      expect(reader.pending).toBe(0);
    }
  });

  it('takes frames up to 256 KiB by default and refuses one announcing more from its 4 length bytes', () => {
    expect(MAX_MILTER_FRAME_BYTES).toBe(256 * 1024);
    const reader = new FrameReader();
    // Postfix's largest frame: a body chunk of 65,535 bytes.
    reader.push(encodeFrame('B', Buffer.alloc(65535, 0x61)));
    expect(reader.next()?.data.length).toBe(65535);
    const atLimit = Buffer.alloc(4);
    atLimit.writeUInt32BE(MAX_MILTER_FRAME_BYTES, 0);
    reader.push(atLimit);
    expect(reader.next()).toBeNull();
    const past = new FrameReader();
    const announced = Buffer.alloc(4);
    announced.writeUInt32BE(1_000_000, 0);
    past.push(announced);
    expect(() => past.next()).toThrow(new MilterProtocolError('frame length 1000000 outside 1..262144'));
  });

  it('refuses a zero or absurd length before reading the data', () => {
    const reader = new FrameReader(1024 * 1024);
    reader.push(Buffer.from('00100001', 'hex'));
    expect(() => reader.next()).toThrow(MilterProtocolError);
    const empty = new FrameReader(16);
    empty.push(Buffer.from('00000000', 'hex'));
    expect(() => empty.next()).toThrow(MilterProtocolError);
  });

  it('decodes macros without braces, and connect information of every family', () => {
    expect(decodeMacros(frames[1].subarray(5))).toEqual({
      event: 'M',
      macros: new Map([
        ['auth_authen', 'r-acme'],
        ['i', 'C913716C112'],
      ]),
    });
    const port = Buffer.from([0x9c, 0x40]);
    expect(
      decodeConnect(
        Buffer.concat([cStrings('[2001:db8::1]'), Buffer.from('6'), port, cStrings('2001:db8::1')]),
      ),
    ).toEqual({ hostname: '[2001:db8::1]', family: '6', port: 40000, address: '2001:db8::1' });
    expect(decodeConnect(Buffer.concat([cStrings('localhost'), Buffer.from('U')]))).toEqual({
      hostname: 'localhost',
      family: 'U',
      port: 0,
      address: '',
    });
  });

  it('writes replies byte for byte: reply code with % doubled, header insert at an index', () => {
    expect(replyCode('550 5.7.1 100% no').toString('latin1')).toBe('\0\0\0\x14y550 5.7.1 100%% no\0');
    expect(insertHeader(0, 'DKIM-Signature', 'v=1;\n a=b').toString('latin1')).toBe(
      '\0\0\0\x1ei\0\0\0\0DKIM-Signature\0v=1;\n a=b\0',
    );
  });
});
