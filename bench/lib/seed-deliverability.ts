import type { CleanStatus } from '../../src/modules/log-index/clean-record';
import {
  deliverabilityOf,
  FAILED_STATUSES,
  type RecordDeliverability,
} from '../../src/modules/deliverability/record-deliverability';

/**
 * What the seeded clean records carry of deliverability.md: recipients spread over the mailbox
 * providers (by their own domains, and two companies' domains hosted by Google Workspace and
 * Microsoft 365, found by the next hop), and for each failure a reply as Postfix logs it, from
 * the providers' real texts. The provider and the bounce class are not written here: they are
 * what the service's own `deliverabilityOf` (the classifier and its rules) decides for that
 * recipient, next hop and reply, so the seed follows the rules as they are.
 */

/** One failure reply: `{host}` is the next hop's name and address, `{rcpt}` the recipient. */
interface Reply {
  dsn: string;
  /** Of 20: how many of the destination's failures of that status answer this. */
  share: number;
  /** Postfix's own words (no next hop answered): relay=none, no "host … said:". */
  own?: string;
  text?: string;
  /** The SMTP command the reply answered. */
  after?: 'RCPT TO' | 'MAIL FROM' | 'end of DATA';
}

interface Destination {
  /** Of 20: this destination's share of the records. */
  share: number;
  domains: readonly string[];
  /** Postfix's `relay=` for it. */
  relay: string;
  bounced: readonly Reply[];
  deferred: readonly Reply[];
}

const GMAIL_UNKNOWN: Reply = {
  dsn: '5.1.1',
  share: 15,
  text: "550-5.1.1 The email account that you tried to reach does not exist. Please try 550-5.1.1 double-checking the recipient's email address for typos or 550-5.1.1 unnecessary spaces. For more information, go to 550 5.1.1  https://support.google.com/mail/?p=NoSuchUser 41be03b00d2f7-b7fe5e1b2f3si1234567a12.321 - gsmtp",
};
const GMAIL_UNAUTHENTICATED: Reply = {
  dsn: '5.7.26',
  share: 3,
  after: 'end of DATA',
  text: '550-5.7.26 This mail has been blocked because the sender is unauthenticated. 550-5.7.26 Gmail requires all senders to authenticate with either SPF or DKIM. 550-5.7.26 550-5.7.26  Authentication results: 550-5.7.26  DKIM = did not pass 550-5.7.26  SPF [d0.bench.example] with ip: [192.0.2.10] = did not pass 550-5.7.26 550-5.7.26  For instructions on setting up authentication, go to 550 5.7.26  https://support.google.com/mail/answer/81126#authentication 6a1803df08f44-6b0a1b2c3d4si1234567a.12 - gsmtp',
};
const GMAIL_UNSOLICITED: Reply = {
  dsn: '5.7.1',
  share: 2,
  after: 'end of DATA',
  text: '550-5.7.1 [192.0.2.10      12] Our system has detected that this message is 550-5.7.1 likely unsolicited mail. To reduce the amount of spam sent to Gmail, 550-5.7.1 this message has been blocked. Please visit 550-5.7.1  https://support.google.com/mail/?p=UnsolicitedMessageError 550 5.7.1  for more information. d2e1a72fcca58-6f4c1b2e3a4si1234567b3c.45 - gsmtp',
};
const GMAIL_DEFERRED: readonly Reply[] = [
  {
    dsn: '4.7.28',
    share: 10,
    after: 'end of DATA',
    text: '421-4.7.28 Gmail has detected an unusual rate of unsolicited mail originating 421-4.7.28 from your IP address 192.0.2.10. To protect our users from spam, mail sent 421-4.7.28 from your IP address has been temporarily rate limited. To review our 421-4.7.28 bulk email senders guidelines, go to 421 4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError 98e67ed59e1d1-2a1b2c3d4e5si1234567a.12 - gsmtp',
  },
  {
    dsn: '4.2.2',
    share: 10,
    text: "452-4.2.2 The recipient's inbox is out of storage space. Please direct the 452-4.2.2 recipient to 452 4.2.2  https://support.google.com/mail/?p=OverQuotaTemp 41be03b00d2f7-b7fe5e1b2f3si1234567a12.321 - gsmtp",
  },
];
const MICROSOFT_BOUNCED: readonly Reply[] = [
  {
    dsn: '5.5.0',
    share: 16,
    text: '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [AM4PEPF00027A6C.eurprd04.prod.outlook.com 2025-11-20T10:12:13.123Z 08DE27A1B2C3D4E5]',
  },
  {
    dsn: '5.7.1',
    share: 4,
    after: 'MAIL FROM',
    text: "550 5.7.1 Unfortunately, messages from [192.0.2.10] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors. [AM4PEPF00025F97.EURPRD83.prod.outlook.com 2025-11-20T10:12:13.123Z 08DE27A1B2C3D4E5]",
  },
];
const MICROSOFT_DEFERRED: readonly Reply[] = [
  {
    dsn: '4.7.650',
    share: 20,
    after: 'MAIL FROM',
    text: '451 4.7.650 The mail server [192.0.2.10] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S775) [AM4PEPF00027A6C.eurprd04.prod.outlook.com 2025-11-20T10:12:13.123Z 08DE27A1B2C3D4E5]',
  },
];

/** 20 slots: gmail 40 % (5 of it Google Workspace), microsoft 25 % (5 Microsoft 365), yahoo 15 %, apple 10 %, other 10 %. */
const DESTINATIONS: readonly Destination[] = [
  {
    share: 7,
    domains: ['gmail.com', 'googlemail.com'],
    relay: 'gmail-smtp-in.l.google.com[142.250.102.27]:25',
    bounced: [GMAIL_UNKNOWN, GMAIL_UNAUTHENTICATED, GMAIL_UNSOLICITED],
    deferred: GMAIL_DEFERRED,
  },
  {
    share: 1,
    domains: ['bench-workspace.example'],
    relay: 'aspmx.l.google.com[142.250.102.26]:25',
    bounced: [GMAIL_UNKNOWN, GMAIL_UNAUTHENTICATED, GMAIL_UNSOLICITED],
    deferred: GMAIL_DEFERRED,
  },
  {
    share: 4,
    domains: ['outlook.com', 'hotmail.com', 'live.fr'],
    relay: 'outlook-com.olc.protection.outlook.com[52.101.68.0]:25',
    bounced: MICROSOFT_BOUNCED,
    deferred: MICROSOFT_DEFERRED,
  },
  {
    share: 1,
    domains: ['bench-m365.example'],
    relay: 'bench-m365-example.mail.protection.outlook.com[52.101.73.9]:25',
    bounced: MICROSOFT_BOUNCED,
    deferred: MICROSOFT_DEFERRED,
  },
  {
    share: 3,
    domains: ['yahoo.com', 'aol.com', 'yahoo.co.uk'],
    relay: 'mta7.am0.yahoodns.net[67.195.204.73]:25',
    bounced: [
      {
        dsn: '5.0.0',
        share: 17,
        after: 'end of DATA',
        text: "554 delivery error: dd This user doesn't have a yahoo.com account ({rcpt}) [0] - mta4012.mail.gq1.yahoo.com",
      },
      {
        dsn: '5.0.0',
        share: 3,
        after: 'end of DATA',
        text: '554 delivery error: dd Sorry your message to {rcpt} cannot be delivered. This mailbox is disabled (554.30). - mta4321.mail.gq1.yahoo.com',
      },
    ],
    deferred: [
      {
        dsn: '4.7.0',
        share: 20,
        after: 'MAIL FROM',
        text: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
      },
    ],
  },
  {
    share: 2,
    domains: ['icloud.com', 'me.com'],
    relay: 'mx01.mail.icloud.com[17.42.251.62]:25',
    bounced: [
      { dsn: '5.1.1', share: 17, text: '550 5.1.1 <{rcpt}>: user does not exist' },
      {
        dsn: '5.7.1',
        share: 3,
        after: 'end of DATA',
        text: '550 5.7.1 [CS01] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
      },
    ],
    deferred: [
      {
        dsn: '4.7.1',
        share: 20,
        text: '421 4.7.1 Messages to {rcpt} deferred due to excessive volume. Try again later - https://support.apple.com/en-us/HT204137',
      },
    ],
  },
  {
    share: 2,
    domains: ['example.net', 'example.org'],
    relay: 'mx.example.net[192.0.2.25]:25',
    bounced: [
      {
        dsn: '5.1.1',
        share: 12,
        text: '550 5.1.1 <{rcpt}>: Recipient address rejected: User unknown in virtual mailbox table',
      },
      {
        dsn: '5.4.4',
        share: 3,
        own: 'Host or domain name not found. Name service error for name={domain} type=AAAA: Host not found',
      },
      {
        dsn: '5.7.1',
        share: 3,
        text: '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.10',
      },
      {
        dsn: '5.7.1',
        share: 2,
        after: 'end of DATA',
        text: '550 5.7.1 Email rejected per DMARC policy for d0.bench.example',
      },
    ],
    deferred: [
      { dsn: '4.4.1', share: 10, own: 'connect to mx.{domain}[192.0.2.25]:25: Connection timed out' },
      {
        dsn: '4.7.1',
        share: 10,
        text: '450 4.7.1 <{rcpt}>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/{domain}.html',
      },
    ],
  },
];

const slots = <T extends { share: number }>(items: readonly T[]): T[] => {
  const out = items.flatMap((item) => Array<T>(item.share).fill(item));
  if (out.length !== 20) throw new Error(`seed shares add up to ${out.length}, not 20`);
  return out;
};
const DESTINATION_SLOTS = slots(DESTINATIONS);
const REPLY_SLOTS = new Map(
  DESTINATIONS.map((d) => [d, { bounced: slots(d.bounced), deferred: slots(d.deferred) }]),
);

export interface SeededOutcome extends RecordDeliverability {
  recipient: string;
  /** Postfix's relay= (null for our own relay's refusals). */
  relay: string | null;
  dsn: string;
  response: string;
}

/**
 * Which of 20 reply slots record `i` gets: a multiplicative hash of floor(i / 10), so the reply
 * follows neither the status (i mod 10) nor the destination (floor(i / 10) mod 20) nor the time
 * (a record a minute: a cycle of the destination's own records would span days, and a 24-hour
 * window, the `blocked` alert's, would see a few of its replies only).
 */
const replySlot = (i: number) =>
  Math.floor(((Math.imul(Math.floor(i / 10), 0x9e3779b1) >>> 0) / 2 ** 32) * 20);

/**
 * Record `i`'s recipient, next hop and reply for `status`, with the provider and bounce class the
 * service decides for them.
 */
export class SeededDeliverability {
  private readonly decided = new Map<string, RecordDeliverability>();
  /** Decisions taken by the service's classifier (one per distinct reply and destination). */
  classified = 0;

  outcome(i: number, status: CleanStatus): SeededOutcome {
    const destination = DESTINATION_SLOTS[Math.floor(i / 10) % 20];
    const domain = destination.domains[Math.floor(i / 4000) % destination.domains.length];
    const recipient = `user${i}@${domain}`;
    if (status === 'rejected') {
      // Our own relay's refusal at RCPT: no next hop, no bounce class (FAILED_STATUSES).
      return {
        recipient,
        relay: null,
        dsn: '5.7.1',
        response: `554 5.7.1 <${recipient}>: Recipient address rejected: Access denied`,
        ...this.decide(`${status}\n${domain}`, {
          status,
          to: recipient,
          dsn: '5.7.1',
          response: null,
          relay: null,
        }),
      };
    }
    if (!FAILED_STATUSES.has(status)) {
      return {
        recipient,
        relay: destination.relay,
        dsn: '2.0.0',
        response: '250 2.0.0 Ok',
        ...this.decide(`${status}\n${domain}\n${destination.relay}`, {
          status,
          to: recipient,
          dsn: '2.0.0',
          response: null,
          relay: destination.relay,
        }),
      };
    }
    const replies = REPLY_SLOTS.get(destination)!;
    const reply = (status === 'deferred' ? replies.deferred : replies.bounced)[replySlot(i)];
    const fill = (text: string) => text.replace(/\{rcpt\}/g, recipient).replace(/\{domain\}/g, domain);
    const relay = reply.own ? 'none' : destination.relay;
    const response = reply.own
      ? fill(reply.own)
      : `host ${destination.relay.replace(/:\d+$/, '')} said: ${fill(reply.text!)} (in reply to ${reply.after ?? 'RCPT TO'} command)`;
    return {
      recipient,
      relay,
      dsn: reply.dsn,
      response,
      ...this.decide(`${status}\n${domain}\n${relay}\n${reply.dsn}\n${reply.own ?? reply.text}`, {
        status,
        to: recipient,
        dsn: reply.dsn,
        response,
        relay,
      }),
    };
  }

  private decide(key: string, record: Parameters<typeof deliverabilityOf>[0]): RecordDeliverability {
    let decided = this.decided.get(key);
    if (!decided) {
      decided = deliverabilityOf(record);
      this.decided.set(key, decided);
      this.classified++;
    }
    return decided;
  }
}
