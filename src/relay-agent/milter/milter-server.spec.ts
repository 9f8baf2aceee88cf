import { Logger } from '@nestjs/common';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { milterMessages } from '../../modules/metrics/metrics';
import { MilterDecisions, SendingCompany } from './milter-decisions';
import { cStrings, encodeFrame, Frame, splitStrings } from './milter-protocol';
import { MilterServer, MilterServerOptions } from './milter-server';
import { liveMemory } from '../../../test/support/live-memory';
import { deliveredMessage, dkimResults, dkimTestKey } from '../../../test/support/relay-agent/dkim-test-key';
import { PostfixMilterClient, TestMessage } from '../../../test/support/relay-agent/postfix-milter-client';

const ACME = 1;
const BETA = 2;
const acmeKey = dkimTestKey();
const betaKey = dkimTestKey();
const idnKey = dkimTestKey();
const DNS = {
  'rs1._domainkey.acme.test': `v=DKIM1; k=rsa; p=${acmeKey.publicKey}`,
  'rs2._domainkey.beta.test': `v=DKIM1; k=rsa; p=${betaKey.publicKey}`,
  'rs3._domainkey.xn--bcher-kva.test': `v=DKIM1; k=rsa; p=${idnKey.publicKey}`,
};

/**
 * The service's answers: relay users, allowed networks (one address per network here) and verified
 * domains of two companies, by the one rule: SASL username, else the client address (the
 * envelope sender's domain deciding among companies sharing it); null when neither identifies.
 */
class FakeDecisions implements MilterDecisions {
  calls: Array<{ relayUsername?: string; clientAddress?: string; sender?: string }> = [];
  failing = false;
  readonly users: Record<string, number> = { 'r-acme': ACME, 'r-beta': BETA };
  readonly networks: Record<string, number[]> = { '198.51.100.7': [ACME], '198.51.100.8': [ACME, BETA] };
  readonly refusals: Record<number, SendingCompany['refusal']> = {};
  readonly owners: Record<string, number> = {
    'acme.test': ACME,
    'beta.test': BETA,
    'xn--bcher-kva.test': ACME,
  };
  readonly keys: Record<string, { selector: string; privateKeyPem: string }> = {
    'acme.test': { selector: 'rs1', privateKeyPem: acmeKey.privateKeyPem },
    'beta.test': { selector: 'rs2', privateKeyPem: betaKey.privateKeyPem },
    'xn--bcher-kva.test': { selector: 'rs3', privateKeyPem: idnKey.privateKeyPem },
  };

  sendingCompany(facts: { relayUsername?: string; clientAddress?: string; sender?: string }) {
    this.calls.push(facts);
    if (this.failing) return Promise.reject(new Error('connect ECONNREFUSED'));
    let id: number | undefined;
    if (facts.relayUsername) id = this.users[facts.relayUsername];
    else if (facts.clientAddress) {
      const candidates = this.networks[facts.clientAddress] ?? [];
      const owner = this.owners[(facts.sender ?? '').split('@').pop()!];
      id = candidates.length === 1 ? candidates[0] : candidates.find((c) => c === owner);
    }
    return Promise.resolve(id ? { id, refusal: this.refusals[id] ?? null } : null);
  }

  ownerOf(domain: string) {
    return Promise.resolve(this.owners[domain] ?? null);
  }

  signingKey(domain: string) {
    return Promise.resolve(this.keys[domain] ?? null);
  }
}

const headers = (from = 'Acme News <news@acme.test>'): Array<[string, string]> => [
  ['From', from],
  ['To', 'jo@example.net'],
  ['Subject', 'Your invoice\n\tfor November'],
  ['Date', 'Sun, 22 Nov 2026 02:41:47 +0000'],
  ['Message-ID', '<20261122024147.000544@acme.test>'],
  ['MIME-Version', '1.0'],
  ['Content-Type', 'text/plain; charset=utf-8'],
  ['Content-Transfer-Encoding', '8bit'],
  ['X-Mailer', 'not signed'],
];

const message = (over: Partial<TestMessage> = {}): TestMessage => ({
  mailFrom: '<news@acme.test>',
  authUser: 'r-acme',
  headers: headers(),
  body: 'Hello Jo,\r\n\r\nyour invoice is attached.\r\n',
  ...over,
});

const bodyOf = (m: TestMessage): Buffer =>
  typeof m.body === 'string'
    ? Buffer.from(m.body)
    : Buffer.isBuffer(m.body)
      ? m.body
      : Buffer.concat([...m.body]);

function frameBytes(f: Frame): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(f.data.length + 1, 0);
  head[4] = f.command.charCodeAt(0);
  return Buffer.concat([head, f.data]);
}

/** The inserted header of an `i` reply, after checking its index is 0. */
function inserted(f: Frame): { name: string; value: string } {
  expect(f.command).toBe('i');
  expect(f.data.readUInt32BE(0)).toBe(0);
  const [name, value] = splitStrings(f.data.subarray(4));
  return { name, value };
}

async function expectSigned(replies: Frame[], m: TestMessage, domain = 'acme.test') {
  expect(replies.map((r) => r.command)).toEqual(['i', 'c']);
  expect(frameBytes(replies[1])).toEqual(Buffer.from([0, 0, 0, 1, 0x63]));
  const header = inserted(replies[0]);
  expect(header.name).toBe('DKIM-Signature');
  expect(header.value).not.toContain('\r');
  expect(header.value).toMatch(/^v=1; a=rsa-sha256; c=relaxed\/relaxed; d=[a-z0-9.-]+;\n h=/);
  const results = await dkimResults(deliveredMessage([header], m.headers, bodyOf(m)), DNS);
  expect(results[0]).toMatchObject({ domain, result: 'pass' });
  return { header, results };
}

describe('MilterServer', () => {
  beforeAll(() => Logger.overrideLogger(false));

  let decisions: FakeDecisions;
  let server: MilterServer;
  let port: number;
  const clients: PostfixMilterClient[] = [];

  async function start(options?: MilterServerOptions) {
    decisions = new FakeDecisions();
    server = new MilterServer(decisions, options);
    port = await server.listen(0, '127.0.0.1');
  }

  async function client(): Promise<PostfixMilterClient> {
    const c = await PostfixMilterClient.open(port);
    clients.push(c);
    await c.negotiate();
    await c.connectEvent();
    return c;
  }

  beforeEach(() => start());
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server.close();
  });

  it('negotiates version 6, the add-headers action, and no events or replies it does not need', async () => {
    const c = await PostfixMilterClient.open(port);
    clients.push(c);
    await c.write(Buffer.from('0000000d4f00000006000001ff001fffff', 'hex'));
    const reply = await c.reply();
    // Version 6; SMFIF_ADDHDRS; SMFIP_NOHELO|NORCPT|NODATA|NOUNKNOWN|NR_HDR and NR_CONN..NR_BODY.
    expect(frameBytes(reply).toString('hex')).toBe('0000000d4f00000006000000010' + '00ff38a');
  });

  it('takes only the flags Postfix offers, and answers every event it did not agree to skip', async () => {
    const c = await PostfixMilterClient.open(port);
    clients.push(c);
    const agreed = await c.negotiate({ version: 2, actions: 0x1f, protocol: 0x7f });
    expect(agreed).toEqual({ version: 2, actions: 1, protocol: 0x0a });
    await c.connectEvent();
    const m = message();
    await expectSigned(await c.message(m), m);
  });

  it('signs at index 0 with the From domain key, h= the signed headers present; dkim=pass, aligned', async () => {
    const c = await client();
    const m = message();
    const signed = await milterCount('signed');
    const { header, results } = await expectSigned(await c.message(m), m);
    expect(await milterCount('signed')).toBe(signed + 1);
    expect(header.value).toContain(' d=acme.test;');
    expect(header.value).toContain(' s=rs1;');
    expect(header.value.replace(/\s+/g, '')).toContain(
      // mailauth lists them from the bottom up, as a verifier picks repeated headers.
      'h=Content-Transfer-Encoding:Content-Type:MIME-Version:Message-ID:Date:Subject:To:From;',
    );
    expect(results[0].aligned).toBe('acme.test');
    expect(decisions.calls).toEqual([
      { relayUsername: 'r-acme', clientAddress: '192.0.2.10', sender: 'news@acme.test' },
    ]);
  });

  it('signs a message split into packets at any byte and one pipelined in a single write', async () => {
    const c = await PostfixMilterClient.open(port);
    clients.push(c);
    c.protocol = 0xff38a; // what the milter agrees to, so the whole conversation can be sent at once
    const m = message({ body: 'x'.repeat(70_000) + '\r\nend\r\n' });
    const port40000 = Buffer.from([0x9c, 0x40]);
    const conversation = Buffer.concat([
      Buffer.from('0000000d4f00000006000001ff001fffff', 'hex'),
      encodeFrame(
        'C',
        Buffer.concat([cStrings('client.example'), Buffer.from('4'), port40000, cStrings('192.0.2.10')]),
      ),
      ...c.messageFrames(m),
      ...c.messageFrames(m),
    ]);
    for (let at = 0; at < conversation.length;) {
      const size = 1 + ((at * 7919) % 13);
      await c.write(conversation.subarray(at, at + size));
      at += size;
    }
    expect((await c.reply()).command).toBe('O');
    await expectSigned(await c.endReplies(), m);
    await expectSigned(await c.endReplies(), m);

    const pipelined = await PostfixMilterClient.open(port);
    clients.push(pipelined);
    pipelined.protocol = 0xff38a;
    await pipelined.write(conversation);
    expect((await pipelined.reply()).command).toBe('O');
    await expectSigned(await pipelined.endReplies(), m);
    await expectSigned(await pipelined.endReplies(), m);
  });

  it('never answers ABORT, even twice, and starts the next message afresh', async () => {
    const c = await client();
    const before = Buffer.concat(c.received).length;
    const frames = [...c.messageFrames(message({ headers: headers('x@beta.test') }))];
    for (const f of frames.slice(0, -2)) await c.write(f); // up to the body, not the end
    await c.abort();
    await c.abort();
    const m = message();
    await expectSigned(await c.message(m), m);
    // Nothing was written for the aborted message: the only bytes are this message's answer.
    const after = Buffer.concat(c.received).subarray(before);
    expect(after[4]).toBe(0x69);
  });

  it('carries several messages of different companies on one connection, each signed by its own domain', async () => {
    const c = await client();
    const acme = message();
    const beta = message({
      authUser: 'r-beta',
      mailFrom: '<a@beta.test>',
      headers: headers('<a@beta.test>'),
    });
    const idn = message({ headers: headers('Bücher <verkauf@bücher.test>') });
    await expectSigned(await c.message(acme), acme);
    await expectSigned(await c.message(beta), beta, 'beta.test');
    const signed = await expectSigned(await c.message(idn), idn, 'xn--bcher-kva.test');
    expect(signed.header.value).toContain(' s=rs3;');
    await expectSigned(await c.message(acme), acme);
  });

  it("refuses a From of a domain the company has not verified, another company's included: 550 5.7.1", async () => {
    const c = await client();
    const replies = await c.message(message({ headers: headers('"CEO" <ceo@Beta.Test.>') }));
    expect(replies.map(frameBytes)).toEqual([
      Buffer.concat([
        Buffer.from([0, 0, 0, 66, 0x79]),
        Buffer.from('550 5.7.1 From domain beta.test is not verified for this account\0'),
      ]),
    ]);
    const second = await c.message(message({ headers: headers('news@acme.test, x@nowhere.test') }));
    expect(second[0].data.toString()).toBe(
      '550 5.7.1 From domain nowhere.test is not verified for this account\0',
    );
    const subdomain = await c.message(message({ headers: headers('news@mail.acme.test') }));
    expect(subdomain[0].data.toString()).toBe(
      '550 5.7.1 From domain mail.acme.test is not verified for this account\0',
    );
    const literal = await c.message(message({ headers: headers('ceo@[192.0.2.1]') }));
    expect(literal[0].data.toString()).toBe(
      '550 5.7.1 From domain [192.0.2.1] is not verified for this account\0',
    );
    const noDomain = await c.message(message({ headers: headers('ceo@') }));
    expect(noDomain[0].data.toString()).toBe(
      '550 5.7.1 From domain (none) is not verified for this account\0',
    );
  });

  it('accepts it unsigned when RELAY_REQUIRE_VERIFIED_DOMAIN is off', async () => {
    await server.close();
    await start({ requireVerifiedDomain: false });
    const c = await client();
    const replies = await c.message(message({ headers: headers('x@nowhere.test') }));
    expect(replies.map(frameBytes)).toEqual([Buffer.from([0, 0, 0, 1, 0x63])]);
  });

  it('refuses a message without a From header, or with two: 550 5.6.0', async () => {
    const c = await client();
    const none = await c.message(message({ headers: headers().slice(1) }));
    expect(frameBytes(none[0])).toEqual(
      Buffer.concat([
        Buffer.from([0, 0, 0, 47, 0x79]),
        Buffer.from('550 5.6.0 Message has 0 From headers, not one\0'),
      ]),
    );
    const two = await c.message(message({ headers: [['From', 'news@acme.test'], ...headers()] }));
    expect(two[0].data.toString()).toBe('550 5.6.0 Message has 2 From headers, not one\0');
    const empty = await c.message(
      message({ headers: [['From', 'undisclosed-recipients:;'], ...headers().slice(1)] }),
    );
    expect(empty[0].data.toString()).toBe('550 5.6.0 From header has no address\0');
  });

  it('tempfails when a decision cannot be made (database unreachable), never accepting unsigned', async () => {
    const c = await client();
    const tempfailed = await milterCount('tempfailed');
    decisions.failing = true;
    expect((await c.message(message())).map(frameBytes)).toEqual([Buffer.from([0, 0, 0, 1, 0x74])]);
    decisions.failing = false;
    delete decisions.keys['acme.test'];
    expect((await c.message(message())).map(frameBytes)).toEqual([Buffer.from([0, 0, 0, 1, 0x74])]);
    expect(await milterCount('tempfailed')).toBe(tempfailed + 2);
  });

  it('judges a null sender from a client like any other message: refused for a foreign From, signed for its own', async () => {
    const c = await client();
    const foreign = await c.message(message({ mailFrom: '<>', headers: headers('ceo@beta.test') }));
    expect(foreign[0].data.toString()).toBe(
      '550 5.7.1 From domain beta.test is not verified for this account\0',
    );
    const own = message({ mailFrom: '<>' });
    await expectSigned(await c.message(own), own);
    expect(decisions.calls.map((call) => call.sender)).toEqual(['', '']);
  });

  it("accepts Postfix's own mail as is: local submissions (no real client)", async () => {
    const accepted = await milterCount('accepted');
    const local = await PostfixMilterClient.open(port);
    clients.push(local);
    await local.negotiate();
    await local.connectEvent({ hostname: 'localhost', family: '4', port: 0, address: '127.0.0.1' });
    expect((await local.message(message({ authUser: undefined }))).map(frameBytes)).toEqual([
      Buffer.from([0, 0, 0, 1, 0x63]),
    ]);
    expect(decisions.calls).toEqual([]);
    expect(await milterCount('accepted')).toBe(accepted + 1);
  });

  it("keeps a customer's own DKIM-Signature: both signatures verify", async () => {
    const c = await client();
    const body = 'Signed twice.\r\n';
    const own = await dkimSign(deliveredMessage([], headers(), Buffer.from(body)), {
      signatureData: [{ signingDomain: 'beta.test', selector: 'rs2', privateKey: betaKey.privateKeyPem }],
    } as never);
    const ownHeader = own.signatures
      .trim()
      .replace(/^DKIM-Signature: /, '')
      .replace(/\r\n/g, '\n');
    const m = message({ body, headers: [['DKIM-Signature', ownHeader], ...headers()] });
    const replies = await c.message(m);
    const header = inserted(replies[0]);
    const results = await dkimResults(deliveredMessage([header], m.headers, Buffer.from(body)), DNS);
    expect(results.map((r) => [r.domain, r.result])).toEqual([
      ['acme.test', 'pass'],
      ['beta.test', 'pass'],
    ]);
  });

  it('signs an 8-bit body and a 25 MB body as they stream, without keeping them', async () => {
    const c = await client();
    const eightBit = message({
      body: Buffer.from('Grüße aus Jakarta — ünïcödé\r\n\tindented  line  \r\n\r\n\r\n', 'utf8'),
    });
    await expectSigned(await c.message(eightBit), eightBit);

    const line = Buffer.from(
      '0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ  \t trailing  \r\n',
    );
    const lines = Math.ceil((25 * 1024 * 1024) / line.length);
    // What is live (liveMemory), not RSS: this jest worker's RSS moved +38 MB once in CI for this message.
    let before = 0;
    let growth: number | undefined;
    // The body is generated chunk by chunk, so neither side holds it; the verifier gets it once.
    // Three quarters through the first pass, a server that kept the body would hold ~19 MB of it.
    function* body(measure = false): Generator<Buffer> {
      const block = Buffer.concat(Array.from({ length: 800 }, () => line));
      for (let i = 0; i < lines; i += 800) {
        if (measure && growth === undefined && i >= (lines * 3) / 4)
          growth = (liveMemory() - before) / 1024 / 1024;
        yield block.subarray(0, Math.min(800, lines - i) * line.length);
      }
    }
    before = liveMemory();
    const big = message({ body: body(true) });
    const replies = await c.message(big);
    console.log(`25 MB message: live heap and Buffers three quarters through +${growth?.toFixed(1)} MB`);
    expect(growth).toBeLessThan(8);
    const header = inserted(replies[0]);
    const delivered = deliveredMessage([header], big.headers, Buffer.concat([...body()]));
    expect(delivered.length).toBeGreaterThan(25 * 1024 * 1024);
    expect((await dkimResults(delivered, DNS))[0]).toMatchObject({ domain: 'acme.test', result: 'pass' });
  }, 120_000);

  it('stops reading a client that does not read its replies, and answers everything once it does', async () => {
    const c = await client();
    c.socket.pause();
    // The smallest refused message, so that its replies outgrow the loopback socket buffers quickly.
    const frames = Buffer.concat([
      encodeFrame('M', cStrings('<x@nowhere.test>')),
      encodeFrame('L', cStrings('From', 'x@nowhere.test')),
      encodeFrame('N'),
      encodeFrame('E'),
    ]);
    // Batches are written until the milter says it stopped reading because its replies are not
    // read: the loopback buffers' size varies from run to run, so the test writes until they are full.
    let stalls = 0;
    server.on('stalled', () => (stalls += 1));
    const batch = Buffer.concat(Array.from({ length: 5000 }, () => frames));
    let writes = 0;
    while (stalls === 0 && writes < 1_000_000) {
      c.socket.write(batch);
      writes += 5000;
      await waitFor(() => decisions.calls.length === writes || stalls > 0);
    }
    expect(stalls).toBeGreaterThan(0);
    // Stopped: what is written now stays unread until the client reads its replies.
    c.socket.write(batch);
    writes += 5000;
    expect(decisions.calls.length).toBeLessThan(writes);
    c.socket.resume();
    const commands = new Set<string>();
    for (let i = 0; i < writes; i += 1) commands.add((await c.reply()).command);
    expect([...commands]).toEqual(['y']);
    expect(decisions.calls.length).toBe(writes);
  }, 180_000);

  describe('the company is the one the policy authorised for the session, never the From header', () => {
    const reply = (replies: Frame[]) => replies[0].data.toString();

    it('refuses a client with no identity (no SASL username, an address in no network): 550 5.7.1 Authentication required', async () => {
      const refused = await milterCount('refused');
      const c = await client();
      const replies = await c.message(message({ authUser: undefined }));
      expect(replies.map(frameBytes)).toEqual([
        Buffer.concat([Buffer.from([0, 0, 0, 35, 0x79]), Buffer.from('550 5.7.1 Authentication required\0')]),
      ]);
      expect(decisions.calls).toEqual([{ clientAddress: '192.0.2.10', sender: 'news@acme.test' }]);
      // An unknown username identifies no one either.
      expect(reply(await c.message(message({ authUser: 'r-nobody' })))).toBe(
        '550 5.7.1 Authentication required\0',
      );
      expect(await milterCount('refused')).toBe(refused + 2);
    });

    it('signs for a client identified by its allowed network', async () => {
      const c = await PostfixMilterClient.open(port);
      clients.push(c);
      await c.negotiate();
      await c.connectEvent({ hostname: 'mx.acme.test', family: '4', port: 40001, address: '198.51.100.7' });
      const m = message({ authUser: undefined });
      await expectSigned(await c.message(m), m);
    });

    it('decides a shared network by the envelope sender, not by the From header', async () => {
      const c = await PostfixMilterClient.open(port);
      clients.push(c);
      await c.negotiate();
      await c.connectEvent({ hostname: 'o365.example', family: '4', port: 40002, address: '198.51.100.8' });
      const beta = message({
        authUser: undefined,
        mailFrom: '<a@beta.test>',
        headers: headers('a@beta.test'),
      });
      await expectSigned(await c.message(beta), beta, 'beta.test');
      // Envelope of Beta, From: of Acme: Beta sends, and Acme's domain is not Beta's.
      const spoof = await c.message(message({ authUser: undefined, mailFrom: '<a@beta.test>' }));
      expect(reply(spoof)).toBe('550 5.7.1 From domain acme.test is not verified for this account\0');
      // An envelope sender neither company verified: no identity in a shared network.
      const unknown = await c.message(message({ authUser: undefined, mailFrom: '<a@else.test>' }));
      expect(reply(unknown)).toBe('550 5.7.1 Authentication required\0');
    });

    it("authenticated as Acme with Beta's From: refused, whatever the envelope says", async () => {
      const c = await client();
      const spoof = await c.message(
        message({ mailFrom: '<news@acme.test>', headers: headers('ceo@beta.test') }),
      );
      expect(reply(spoof)).toBe('550 5.7.1 From domain beta.test is not verified for this account\0');
      const envelope = await c.message(
        message({ mailFrom: '<ceo@beta.test>', headers: headers('ceo@beta.test') }),
      );
      expect(reply(envelope)).toBe('550 5.7.1 From domain beta.test is not verified for this account\0');
    });

    it('refuses a suspended company and one without a package, whatever its domains', async () => {
      const c = await client();
      decisions.refusals[ACME] = 'account suspended';
      expect(reply(await c.message(message()))).toBe('550 5.7.1 account suspended\0');
      decisions.refusals[ACME] = 'no active package';
      expect(reply(await c.message(message()))).toBe('550 5.7.1 no active package\0');
    });
  });

  describe('From forms no receiver can align', () => {
    const refusalOf = async (from: string) => {
      const c = await client();
      return (await c.message(message({ headers: headers(from) })))[0].data.toString().replace(/\0$/, '');
    };

    it.each([
      ['"ceo@beta.test" <news@acme.test>', '550 5.7.1 From display name names another address'],
      ['ceo@beta.test <news@acme.test>', '550 5.7.1 From display name names another address'],
      [
        '=?utf-8?B?Y2VvQGJldGEudGVzdA==?= <news@acme.test>',
        '550 5.7.1 From display name names another address',
      ],
      ['=?utf-8?Q?ceo=40beta=2Etest?= <news@acme.test>', '550 5.7.1 From display name names another address'],
      ['CEO (ceo@beta.test) <news@acme.test>', '550 5.7.1 From display name names another address'],
      ['"ceo＠beta.test" <news@acme.test>', '550 5.7.1 From display name names another address'],
      ['team: news@acme.test;', '550 5.6.0 From header is a group, not a mailbox'],
      ['"ceo@beta.test"@acme.test', '550 5.6.0 From address has a quoted local part holding @'],
      ['Acme <>', '550 5.6.0 From header has no address'],
    ])('%s: %s', async (from, expected) => {
      expect(await refusalOf(from)).toBe(expected);
    });

    it('signs a display name that writes its own address, or none', async () => {
      for (const from of [
        '"news@acme.test" <news@acme.test>',
        'Acme @ News <news@acme.test>',
        '"Acme" <news@acme.test>',
      ]) {
        const c = await client();
        const m = message({ headers: headers(from) });
        await expectSigned(await c.message(m), m);
      }
    });
  });

  it('closes a connection whose message headers pass 1 MiB, and one announcing a frame over 256 KiB', async () => {
    const c = await client();
    await c.write(encodeFrame('M', cStrings('<news@acme.test>')));
    const header = encodeFrame('L', cStrings('X-Filler', 'x'.repeat(60_000)));
    for (let i = 0; i < 18; i++) await c.write(header);
    await c.whenClosed();

    const big = await client();
    const frame = Buffer.alloc(8);
    frame.writeUInt32BE(256 * 1024 + 1, 0);
    frame.write('L', 4);
    await big.write(frame);
    await big.whenClosed();
  });

  it('closes a connection announcing an absurd frame length', async () => {
    const c = await PostfixMilterClient.open(port);
    clients.push(c);
    await c.write(Buffer.from('7fffffff4f', 'hex'));
    await c.whenClosed();
  });

  it('closes on QUIT', async () => {
    const c = await client();
    await c.quit();
    await c.whenClosed();
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Messages of `milter_messages_total` with this outcome, all reasons together (GET /metrics). */
async function milterCount(outcome: string): Promise<number> {
  const { values } = await milterMessages.get();
  return values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
}
