import fc from 'fast-check';
import { connect } from 'node:net';
import { CompanyAttribution } from '../src/modules/attribution/company-attribution.service';
import { Company } from '../src/modules/companies/entities/company.entity';
import { DomainSigningKeys } from '../src/modules/domains/domain-signing-keys';
import { DomainSigningModule } from '../src/modules/domains/domain-signing.module';
import { RelayDecisionService } from '../src/modules/internal/relay-decision.service';
import { CleanLog } from '../src/modules/log-index/entities/clean-log.entity';
import { PolicyServer } from '../src/relay-agent/policy/policy-server';
import { MilterServer } from '../src/relay-agent/milter/milter-server';
import { dkimTestKey } from './support/relay-agent/dkim-test-key';
import { PostfixMilterClient } from './support/relay-agent/postfix-milter-client';
import { RelayMilterDecisions } from '../src/relay-agent/relay-milter-decisions';
import { createPaidCompany, storeDomain } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const LOG_KEY = 'log-shipper-key-for-relay-identity-0123456789';
const KEY = dkimTestKey();

/**
 * Issue 29's property: for any SASL username, client address, envelope sender and From header,
 * the policy (over Postfix's policy protocol), the milter (over the milter protocol, as Postfix
 * speaks it) and log ingest (Postfix's own lines, shipped over HTTP) name the same company, and
 * a message is relayed or signed only for a company that SMTP AUTH or an allowed network
 * identified. The expected company comes from the rule as the contract words it
 * (integrations.md "Relay decision"), written out here over a small world.
 */
describe('One rule names the company of a message everywhere (property)', () => {
  let t: TestApp;
  let policy: PolicyServer;
  let milter: MilterServer;
  let policyPort: number;
  let milterPort: number;
  /** The world: three paid companies, a suspended one, their domains and networks. */
  const world: Record<'a' | 'b' | 'c' | 'd', { company: Company; domain: string; network: string | null }> =
    {} as never;
  const SHARED = '10.9.0.0/16';

  async function member(key: 'a' | 'b' | 'c' | 'd', network: string | null, state: Partial<Company> = {}) {
    const company = await createPaidCompany(t);
    const domain = `${key}-identity.test`;
    await t.dataSource.getRepository(Company).update({ id: company.id }, state);
    await storeDomain(t, company.id, domain, 'verified', { selector: 'rs1', ...KEY });
    const networks = [network, key === 'a' || key === 'b' ? SHARED : null].filter(Boolean);
    await t.dataSource
      .getRepository(Company)
      .update({ id: company.id }, { allowedIps: networks as string[] });
    world[key] = { company: Object.assign(company, state), domain, network };
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { LOG_SHIPPER_API_KEY: LOG_KEY }, imports: [DomainSigningModule] });
    await member('a', '10.1.0.0/16');
    await member('b', '10.2.0.0/16');
    await member('c', null);
    await member('d', '10.4.0.0/16', { status: 'suspended', suspendedReason: 'abuse' });
    const decisions = t.app.get(RelayDecisionService);
    policy = new PolicyServer((query) => decisions.decide(query));
    policyPort = await policy.listen(0);
    milter = new MilterServer(
      new RelayMilterDecisions(t.app.get(CompanyAttribution), t.app.get(DomainSigningKeys)),
    );
    milterPort = await milter.listen(0);
  });
  afterAll(async () => {
    await policy?.close();
    await milter?.close();
    await t?.close();
  });

  /** The company the contract's rule names, and whether it identified the client. */
  function expected(facts: Facts): { key: keyof typeof world | null; identified: boolean } {
    const keys = Object.keys(world) as Array<keyof typeof world>;
    const senderKey =
      keys.find((k) => facts.sender.toLowerCase().replace(/\.$/, '').endsWith(`@${world[k].domain}`)) ?? null;
    const username = facts.relayUsername;
    if (username !== undefined) {
      const key = keys.find((k) => world[k].company.relayUsername === username.toLowerCase()) ?? null;
      return { key, identified: key !== null };
    }
    const ip = facts.clientAddress.replace(/^::ffff:/, '');
    const inNetwork = (k: keyof typeof world) =>
      [world[k].network, k === 'a' || k === 'b' ? SHARED : null].some(
        (n) => n !== null && ip.startsWith(n.split('.').slice(0, 2).join('.') + '.'),
      );
    const candidates = keys.filter(inNetwork);
    if (candidates.length === 1) return { key: candidates[0], identified: true };
    if (candidates.length > 1 && senderKey && candidates.includes(senderKey))
      return { key: senderKey, identified: true };
    return { key: senderKey, identified: false };
  }

  interface Facts {
    relayUsername?: string;
    clientAddress: string;
    sender: string;
    from: string;
  }

  const facts = (): fc.Arbitrary<Facts> =>
    fc.record(
      {
        relayUsername: fc.constantFrom(
          world.a.company.relayUsername,
          world.b.company.relayUsername.toUpperCase(),
          world.c.company.relayUsername,
          world.d.company.relayUsername,
          'r-nobody00',
        ),
        clientAddress: fc.constantFrom(
          '10.1.0.5',
          '10.2.0.5',
          '10.9.0.5',
          '10.4.0.5',
          '192.0.2.1',
          '::ffff:10.1.0.7',
        ),
        sender: fc.constantFrom(
          '',
          'news@a-identity.test',
          'news@B-Identity.test.',
          'news@c-identity.test',
          'news@d-identity.test',
          'x@nobody.test',
          'ceo',
        ),
        from: fc.constantFrom(
          'news@a-identity.test',
          'News <news@b-identity.test>',
          'news@c-identity.test',
          'news@d-identity.test',
          '"ceo@a-identity.test" <news@b-identity.test>',
          'x@nobody.test',
        ),
      },
      { requiredKeys: ['clientAddress', 'sender', 'from'] },
    );

  /** Postfix's policy request for one recipient, over the policy protocol; answers the action. */
  function policyAction(f: Facts, recipient: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(policyPort, '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => {
        answer += d.toString();
        if (answer.endsWith('\n\n')) {
          socket.end();
          resolve(answer.replace(/^action=/, '').trim());
        }
      });
      socket.on('error', reject);
      const lines = [
        'request=smtpd_access_policy',
        'protocol_state=RCPT',
        `client_address=${f.clientAddress}`,
        `sasl_username=${f.relayUsername ?? ''}`,
        `sender=${f.sender}`,
        `recipient=${recipient}`,
      ];
      socket.write(`${lines.join('\n')}\n\n`);
    });
  }

  async function milterReply(f: Facts): Promise<{ signedFor: string | null; reply: string | null }> {
    const client = await PostfixMilterClient.open(milterPort);
    try {
      await client.negotiate();
      await client.connectEvent({
        hostname: 'client.example',
        family: f.clientAddress.includes(':') ? '6' : '4',
        port: 40000,
        address: f.clientAddress,
      });
      const replies = await client.message({
        mailFrom: `<${f.sender}>`,
        authUser: f.relayUsername,
        headers: [
          ['From', f.from],
          ['To', 'jo@example.net'],
          ['Subject', 'identity'],
        ],
        body: 'hello\r\n',
      });
      const inserted = replies.find((r) => r.command === 'i');
      if (inserted)
        return { signedFor: / d=([^;]+);/.exec(inserted.data.toString('latin1'))![1], reply: null };
      const last = replies[replies.length - 1];
      return {
        signedFor: null,
        reply: last.command === 'y' ? last.data.toString('latin1').replace(/\0+$/, '') : last.command,
      };
    } finally {
      client.close();
    }
  }

  let queue = 0x100000;
  /** Postfix's lines for one message of these facts, shipped; answers the record's company id. */
  async function ingested(f: Facts, recipient: string): Promise<number | null> {
    const id = (queue++).toString(16).toUpperCase();
    const ip = f.clientAddress;
    const sasl =
      f.relayUsername === undefined
        ? ''
        : `, sasl_method=PLAIN, sasl_username=${f.relayUsername.toLowerCase()}`;
    const lines = [
      `postfix/smtpd[10]: ${id}: client=client.example[${ip}]${sasl}`,
      `postfix/qmgr[11]: ${id}: from=<${f.sender}>, size=900, nrcpt=1 (queue active)`,
      `postfix/smtp[12]: ${id}: to=<${recipient}>, relay=mx.example.net[192.0.2.50]:25, delay=1, delays=0.1/0/0.4/0.5, dsn=2.0.0, status=sent (250 2.0.0 Ok)`,
    ];
    const timestamp = new Date().toISOString();
    await t
      .http()
      .post('/api/v1/callback-raw-log')
      .set('x-api-key', LOG_KEY)
      .send(lines.map((message) => ({ message, host: 'relay-identity', timestamp })))
      .expect(200);
    const record = await t.dataSource.getRepository(CleanLog).findOneByOrFail({ queueId: id, to: recipient });
    return record.companyId;
  }

  it('the policy, the milter and log ingest agree, and only an identified client relays or is signed', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(facts(), async (f) => {
        const recipient = `rcpt${n++}@example.net`;
        const want = expected(f);
        const company = want.key === null ? null : world[want.key].company;

        const decision = await t.app.get(RelayDecisionService).decide({
          ...(f.relayUsername !== undefined && { relayUsername: f.relayUsername }),
          clientAddress: f.clientAddress,
          sender: f.sender,
        });
        expect(decision.companyUuid).toBe(company?.uuid ?? null);
        const action = await policyAction(f, recipient);
        if (!want.identified) {
          expect(action).toBe(
            f.relayUsername !== undefined ? 'REJECT unknown account' : 'REJECT Authentication required',
          );
        }
        if (action === 'OK') {
          expect(want.identified).toBe(true);
          expect(company!.status).toBe('active');
        }

        const { signedFor, reply } = await milterReply(f);
        if (!want.identified) expect(reply).toBe('550 5.7.1 Authentication required');
        else if (want.key === 'd') expect(reply).toBe('550 5.7.1 account suspended');
        if (signedFor !== null) {
          // Only the identified company's own domain signs, the From header's alone.
          expect(want.identified).toBe(true);
          expect(signedFor).toBe(world[want.key!].domain);
          expect(f.from.endsWith(`${signedFor}>`) || f.from === `news@${signedFor}`).toBe(true);
        } else if (want.identified && want.key !== 'd') {
          const ownFrom =
            f.from === `news@${world[want.key!].domain}` ||
            f.from === `News <news@${world[want.key!].domain}>`;
          expect({ ownFrom, reply }).toMatchObject({ ownFrom: false });
          expect(reply).toMatch(/^550 5\.7\.1 From (domain|display name)/);
        }

        expect(await ingested(f, recipient)).toBe(company?.id ?? null);
      }),
      { numRuns: 80, ...(process.env.FC_SEED && { seed: Number(process.env.FC_SEED) }) },
    );
  }, 120_000);
});
