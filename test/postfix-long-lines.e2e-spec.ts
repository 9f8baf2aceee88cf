import { INestApplicationContext } from '@nestjs/common';
import { authenticate } from 'mailauth';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Company } from '../src/modules/companies/entities/company.entity';
import { RunningRelayAgent, startRelayAgent } from '../src/relay-agent/relay-agent';
import { publishSigningDomain, TestDnsServer } from './support/dns-server';
import { bearer, createActiveUser, storeDomain } from './support/factories';
import { flushQueue, postfixAvailable, startPostfix, stopPostfix, swaks } from './support/postfix';
import { SmtpSink } from './support/smtp-sink';
import { relayAgentApplication } from './support/relay-agent-app';
import { createTestApp, TestApp } from './support/test-app';
import { markedLine } from './support/relay-agent/marked-line';

const available = postfixAvailable();
const DAY = 86_400_000;
/** The API and the relay agents share it: the agents decrypt the DKIM keys the API stored. */
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const SELECTOR = 'll202611';
/** Postfix's smtp_line_length_limit here, and docs/operator-guide.md's. */
const LIMIT = 990;
if (!available.ok) {
  // CI installs Postfix and swaks (.ci/run): there, a missing one is a failure, not a skip.
  if (process.env.CI) throw new Error(`The long-line Postfix test cannot run in CI: ${available.why}`);
  console.warn(`Skipping the long-line Postfix test: ${available.why}`);
}

/**
 * A line as Postfix 3.7 folds it at `smtp_line_length_limit = 990` (seen on a private instance
 * with a raw sink): its first 990 bytes, then CRLF, a SPACE and the next 989 bytes, and so on.
 */
function foldedAt990(line: string): string {
  const parts = [line.slice(0, LIMIT)];
  for (let at = LIMIT; at < line.length; at += LIMIT - 1) parts.push(` ${line.slice(at, at + LIMIT - 1)}`);
  return parts.join('\r\n');
}

/**
 * Integrations.md "Milter" → "Long lines": a body line longer than 998 characters is legal, and a
 * private Postfix (smtp_line_length_limit = 990, as docs/operator-guide.md says) folds it on the way out,
 * after the relay agent's milter signed the message. The agent, told the same limit
 * (SMTP_LINE_LENGTH_LIMIT), signs the message as Postfix will send it: the folded message
 * verifies at the next hop with mailauth against a DNS server on loopback (DKIM pass, DMARC
 * p=reject pass). An agent told 0 (no folding) signs the lines as they came, and the same
 * message fails there with "body hash did not verify": what a p=reject receiver would refuse.
 */
(available.ok ? describe : describe.skip)(
  'Long lines through a real Postfix (smtp_line_length_limit = 990)',
  () => {
    let t: TestApp;
    let sink: SmtpSink;
    let dns: TestDnsServer;
    const agents: Array<{ app: INestApplicationContext; agent: RunningRelayAgent }> = [];
    const resolver = new Resolver();
    const domain = `lambda-${Date.now().toString(36)}.test`;
    const dkimKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dkimPrivateKey = dkimKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const dkimPublicKey = dkimKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    let relayUsername: string;
    let relayPassword: string;
    const bodyFile = join(tmpdir(), `relay-long-lines-${process.pid}.txt`);

    const line5000 = markedLine(5000);
    const line1500 = markedLine(1500);
    const dotLine = `.${markedLine(1999)}`;
    const eightBit = 'ä'.repeat(1200);
    // A signed header on one physical line of 1,523 characters: Postfix folds it inside a message id.
    const references = Array.from(
      { length: 27 },
      (_, i) => `<${String(i).padStart(3, '0')}.${'r'.repeat(36)}@mail.example>`,
    ).join(' ');

    /** A relay agent application on the API's database, with SMTP_LINE_LENGTH_LIMIT = `limit`. */
    async function startAgent(limit: number): Promise<RunningRelayAgent> {
      const app = await relayAgentApplication(t, { ENCRYPTION_KEY, SMTP_LINE_LENGTH_LIMIT: String(limit) });
      const agent = await startRelayAgent(app, '127.0.0.1', { policy: 'any', sasl: 'any', milter: 'any' });
      agents.push({ app, agent });
      return agent;
    }

    /** Postfix in front of `agent`, folding at 990. */
    async function postfixFor(agent: RunningRelayAgent): Promise<void> {
      await startPostfix({
        policyPort: agent.ports.policy!,
        saslPort: agent.ports.sasl,
        milterPort: agent.ports.milter,
        relayPort: sink.port,
        extra: { smtp_line_length_limit: String(LIMIT) },
      });
    }

    /** Sends the message with long lines with SMTP AUTH and returns it as the next hop got it. */
    async function sendLongLines(subject: string): Promise<Buffer> {
      const sent = await swaks(`news@${domain}`, 'jo@example.net', subject, [
        '--auth',
        'PLAIN',
        '--auth-user',
        relayUsername,
        '--auth-password',
        relayPassword,
        '--header',
        `References: ${references}`,
        '--body',
        `@${bodyFile}`,
      ]);
      expect(sent.transcript).toContain('235 2.7.0 Authentication successful');
      expect(sent.transcript).toMatch(/<- {2}250 2\.0\.0 Ok: queued as [0-9A-F]+/);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const mail = sink.mails.find((m) => m.subject === subject);
        if (mail) return mail.raw;
        flushQueue();
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`Postfix did not relay "${subject}" to the sink`);
    }

    /** mailauth's verdicts at the next hop, the keys and DMARC policy from the test DNS server. */
    async function verdicts(raw: Buffer) {
      const result = await authenticate(raw, {
        ip: '127.0.0.1',
        helo: 'relay.test',
        mta: 'mx.example.net',
        sender: `news@${domain}`,
        resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>,
        disableArc: true,
        disableBimi: true,
      });
      return {
        dkim: result.dkim.results.map((r) => ({
          domain: r.signingDomain,
          result: r.status.result,
          comment: r.status.comment,
        })),
        dmarc: result.dmarc && result.dmarc.status.result,
      };
    }

    beforeAll(async () => {
      writeFileSync(bodyFile, ['Hello,', line5000, '--', line1500, dotLine, eightBit, 'Bye.', ''].join('\n'));
      sink = await new SmtpSink().start();
      dns = new TestDnsServer();
      await dns.start();
      resolver.setServers([dns.address]);
      t = await createTestApp({ env: { ENCRYPTION_KEY } });

      // A paid company with a verified domain (its DKIM key in the database and the DNS) and a relay password.
      const owner = await createActiveUser(t);
      const companies = t.dataSource.getRepository(Company);
      const found = await companies.findOneByOrFail({ uuid: owner.companyUuid });
      await companies.update(
        { id: found.id },
        {
          packageUuid: found.uuid,
          periodStart: new Date(),
          periodEnd: new Date(Date.now() + 30 * DAY),
          quota: 100,
          used: 0,
        },
      );
      await storeDomain(t, found.id, domain, 'verified', {
        selector: SELECTOR,
        publicKey: dkimPublicKey,
        privateKeyPem: dkimPrivateKey,
      });
      publishSigningDomain(dns, domain, SELECTOR, dkimPublicKey);
      relayUsername = found.relayUsername;
      relayPassword = (
        await t
          .http()
          .post(`/api/v1/companies/${found.uuid}/relay-password`)
          .set(...bearer(owner.accessToken))
          .expect(200)
      ).body.data.relayPassword as string;
    }, 120_000);

    afterAll(async () => {
      stopPostfix();
      for (const { app, agent } of agents) {
        await agent.close();
        await app.close();
      }
      await dns?.stop();
      await t?.close();
      await sink?.stop();
      rmSync(bodyFile, { force: true });
    });

    it('5,000- and 1,500-character body lines and a 1,523-character References: line arrive folded by Postfix and verify: DKIM pass, DMARC pass', async () => {
      await postfixFor(await startAgent(LIMIT));
      const raw = await sendLongLines('long lines, agent at 990');
      const text = raw.toString('utf8');

      // Postfix folded every long line (no line of the message is longer than 990 bytes) …
      const lengths = raw
        .toString('latin1')
        .split('\r\n')
        .map((l) => l.length);
      expect(Math.max(...lengths)).toBe(LIMIT);
      expect(text).toContain(`\r\n${foldedAt990(line5000)}\r\n--\r\n${foldedAt990(line1500)}\r\n`);
      expect(text).toContain(`\r\n${foldedAt990(dotLine)}\r\n`);
      expect(raw.includes(Buffer.from(`\r\n${foldedAt990(`References: ${references}`)}\r\n`, 'latin1'))).toBe(
        true,
      );
      expect(raw.includes(Buffer.from(`\r\n${eightBit}\r\n`))).toBe(false);

      // … and the signature made before still verifies at the next hop.
      expect(text.slice(0, 53)).toBe('DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;');
      expect(await verdicts(raw)).toEqual({
        dkim: [expect.objectContaining({ domain, result: 'pass' })],
        dmarc: 'pass',
      });
    }, 90_000);

    it('the control: an agent with SMTP_LINE_LENGTH_LIMIT = 0 signs the lines as they came, and the same message fails (body hash did not verify, DMARC fail)', async () => {
      await postfixFor(await startAgent(0));
      const raw = await sendLongLines('long lines, agent at 0');
      expect(raw.toString('latin1', 0, 53)).toBe('DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;');
      expect(await verdicts(raw)).toEqual({
        dkim: [{ domain, result: 'neutral', comment: 'body hash did not verify' }],
        dmarc: 'fail',
      });
    }, 90_000);
  },
);
