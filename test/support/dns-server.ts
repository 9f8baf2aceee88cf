import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

// dns2 ships no types; the little of it used here is typed below.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dns2 = require('dns2') as Dns2;

interface Question {
  name: string;
  type: number;
}
interface DnsPacket {
  questions: Question[];
  answers: object[];
  header: { rcode: number };
}
interface Dns2 {
  Packet: {
    TYPE: Record<'TXT' | 'CNAME', number>;
    CLASS: { IN: number };
    createResponseFromRequest(request: DnsPacket): DnsPacket;
  };
  createServer(options: {
    udp: boolean;
    tcp: boolean;
    handle: (request: DnsPacket, send: (response: DnsPacket) => void) => void;
  }): {
    listen(options: Record<'udp' | 'tcp', { port: number; address: string }>): Promise<void>;
    addresses(): { udp: { port: number } };
    close(): Promise<void>;
  };
}

/** What a name answers: TXT records (each a list of strings, as split on the wire) and/or a CNAME. */

/** The NXDOMAIN response code (RFC 1035 §4.1.1). */
const NXDOMAIN = 3;
export interface ZoneEntry {
  txt?: string[][];
  cname?: string;
}

/**
 * A real DNS server on a loopback UDP port, answering from `zone` (names lower-case, no
 * trailing dot): a name absent from the zone is NXDOMAIN, a name present without the asked type
 * is NODATA, and a name under a domain in `silent` gets no answer at all (a timeout).
 */
export class TestDnsServer {
  readonly zone = new Map<string, ZoneEntry>();
  readonly silent = new Set<string>();
  /** Questions received, `TYPE name`. */
  readonly asked: string[] = [];
  private server?: ReturnType<Dns2['createServer']>;
  port = 0;

  async start(): Promise<void> {
    const { Packet } = dns2;
    this.server = dns2.createServer({
      udp: true,
      // An answer over 512 bytes (a DKIM key) is truncated over UDP; the resolver retries over TCP.
      tcp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        const [question] = request.questions;
        const name = question.name.toLowerCase().replace(/\.$/, '');
        this.asked.push(
          `${question.type === Packet.TYPE.TXT ? 'TXT' : question.type === Packet.TYPE.CNAME ? 'CNAME' : question.type} ${name}`,
        );
        if ([...this.silent].some((d) => name === d || name.endsWith(`.${d}`))) return;
        const entry = this.zone.get(name);
        if (!entry) {
          // dns2 names no response codes: 3 is NXDOMAIN (RFC 1035).
          response.header.rcode = NXDOMAIN;
        } else if (question.type === Packet.TYPE.TXT) {
          for (const data of entry.txt ?? []) {
            response.answers.push({
              name: question.name,
              type: Packet.TYPE.TXT,
              class: Packet.CLASS.IN,
              ttl: 60,
              data,
            });
          }
        } else if (question.type === Packet.TYPE.CNAME && entry.cname) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.CNAME,
            class: Packet.CLASS.IN,
            ttl: 60,
            domain: entry.cname,
          });
        }
        send(response);
      },
    });
    // dns2 reads port 0 as "no port given": take a free one first, free for TCP too (a port free
    // for UDP may be the local port of an outgoing TCP connection, PostgreSQL's pool above all).
    const port = await freeUdpAndTcpPort();
    await this.server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
    this.port = this.server.addresses().udp.port;
  }

  /** For DNS_SERVERS. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

/** A port free on 127.0.0.1 for both UDP and TCP right now (TCP's choice, tried for UDP; again if taken). */
async function freeUdpAndTcpPort(): Promise<number> {
  for (;;) {
    const tcp = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port));
    });
    const udp = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => (udpFree ? udp.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (udpFree) return port;
  }
}

/** A TXT value split in strings of at most 255 characters, as DNS carries a long DKIM key. */
export function splitTxt(value: string): string[] {
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += 255) parts.push(value.slice(i, i + 255));
  return parts;
}

/** Publishes a signing domain's DKIM key (`<selector>._domainkey.<domain>`) and a DMARC `p=reject` record. */
export function publishSigningDomain(
  dns: TestDnsServer,
  domain: string,
  selector: string,
  publicKey: string,
): void {
  dns.zone.set(`${selector}._domainkey.${domain}`, { txt: [splitTxt(`v=DKIM1; k=rsa; p=${publicKey}`)] });
  dns.zone.set(`_dmarc.${domain}`, { txt: [['v=DMARC1; p=reject']] });
}
