// The bounce rules as data (deliverability.md, "Bounce classes"), in precedence order: the first
// rule whose every given field matches decides. Each rule carries the real replies it was written
// for (providers' postmaster and help pages, MTAs' own texts); they are its test cases.
//
// Order: the mailbox providers' and gateways' own texts, then named blocklists, then Postfix's own
// DNS, connection and TLS errors, then unambiguous RFC 3463 codes, then words any MTA uses, then
// the generic code classes (5.6.x, 5.7.x, 4.4.x). So Gmail's `550 5.7.1 … likely unsolicited mail`
// is reputation, while a bare `5.7.1` with no known words is policy.
//
// Choices the contract leaves open:
// - A 4xx reply is temporary, so never `hard` or `block`: the classifier skips such rules for it.
//   A 4xx refusal about reputation or authentication is `rate-limited` when its text speaks of rate
//   or volume (Gmail's 4.7.28, Yahoo's TSS04 "unexpected volume"), otherwise `other`/soft under the
//   rule `temporary-policy`; greylisting is `other`/soft too (`greylisted`): neither names a rate.
// - `mailbox-full` stays soft for 5.2.2, and `rate-limited` or `infrastructure` stay soft when a
//   receiver words them as a 5xx: retrying later does work.
// - A refused sender address (5.1.7, 5.1.8, "Sender address rejected", "sender verify failed") is
//   `policy`: the sender is the problem, so it must never suppress the recipient.
// - Postfix's "Host or domain name not found" is `bad-domain` with a 5.x.x dsn and
//   `infrastructure` with a 4.x.x one ("Host not found, try again" is a DNS failure, not an answer).
import type { BounceCategory, BounceType } from './bounce-classifier';

/** A real reply; with the dsn or the next hop it came with when the rule looks at them. */
export type RuleExample = string | { readonly reply: string; readonly dsn?: string; readonly relay?: string };

export interface BounceRule {
  readonly name: string;
  readonly category: BounceCategory;
  readonly type: BounceType;
  /** Enhanced status codes: `5.1.1` exactly, or a prefix ending in a dot (`5.6.`). */
  readonly codes?: readonly string[];
  /** Over the reply text with Postfix's `host … said:` and multi-line codes taken out. */
  readonly text?: RegExp;
  /** Over the next hop's host name, lower case (`gmail-smtp-in.l.google.com`). */
  readonly relay?: RegExp;
  readonly replyClass?: 4 | 5;
  readonly examples: readonly RuleExample[];
}

const OUTLOOK = 'outlook-com.olc.protection.outlook.com[52.101.42.3]:25';

const GMAIL_RULES: readonly BounceRule[] = [
  {
    name: 'gmail-receiving-too-fast',
    category: 'rate-limited',
    type: 'soft',
    text: /\breceiving (?:e-?)?mail (?:too quickly|at a rate that prevents)/i,
    examples: [
      '450-4.2.1 The user you are trying to contact is receiving mail at a rate that 450-4.2.1 prevents additional messages from being delivered. Please resend your 450-4.2.1 message at a later time. If the user is able to receive mail at that 450-4.2.1 time, your message will be delivered. For more information, go to 450 4.2.1  https://support.google.com/mail/?p=ReceivingRate a1-20020a170902e5c100b001e0b5d49fc1si1234567plf.123 - gsmtp',
      '550-5.2.1 The user you are trying to contact is receiving mail at a rate that 550-5.2.1 prevents additional messages from being delivered. For more information, go to 550 5.2.1  https://support.google.com/mail/?p=ReceivingRatePerm a1-20020a170902e5c100b001e0b5d49fc1si1234567plf.123 - gsmtp',
      '450 4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time.',
    ],
  },
  {
    name: 'gmail-unsolicited',
    category: 'reputation',
    type: 'block',
    text: /\b(?:likely|unusual rate of) unsolicited (?:e-?)?mail\b/i,
    examples: [
      '550-5.7.1 [192.0.2.7      12] Our system has detected that this message is 550-5.7.1 likely unsolicited mail. To reduce the amount of spam sent to Gmail, 550-5.7.1 this message has been blocked. Please visit 550-5.7.1  https://support.google.com/mail/?p=UnsolicitedMessageError 550 5.7.1  for more information. d2e1a72fcca58-6f4c1b2e3a4si1234567b3c.45 - gsmtp',
      '550-5.7.1 This message is likely unsolicited email. To reduce the amount of spam sent 550-5.7.1 to Gmail, this message has been blocked. For more information, go to 550 5.7.1  https://support.google.com/mail/?p=UnsolicitedMessageError 41be03b00d2f7-5c2e07a0b54si1234567a12.123 - gsmtp',
      '550-5.7.28 There is an unusual rate of unsolicited email originating from your IP 550-5.7.28 address. To protect our users from spam, email sent from your IP address 550-5.7.28 has been blocked. To review our bulk email senders guidelines, go to 550 5.7.28  https://support.google.com/mail/?p=UnsolicitedIPError 5b1f17b1804b1-4211a2b3c4dsi123456f.12 - gsmtp',
    ],
  },
  {
    name: 'gmail-low-reputation',
    category: 'reputation',
    type: 'block',
    text: /\bvery low reputation of the sending\b/i,
    examples: [
      '550-5.7.1 [192.0.2.7] This message is likely suspicious due to the very low reputation 550-5.7.1 of the sending IP address. To best protect our users from spam, the 550-5.7.1 message has been blocked. For more information, go to 550 5.7.1  https://support.google.com/mail/answer/188131 98e67ed59e1d1-2a1b2c3d4e5si1234567a.12 - gsmtp',
      '550-5.7.1 This message is likely suspicious due to the very low reputation of the 550-5.7.1 sending domain. To best protect our users from spam, the message has been 550-5.7.1 blocked. For more information, go to 550 5.7.1  https://support.google.com/mail/answer/188131 - gsmtp',
    ],
  },
  {
    name: 'gmail-auth-5.7.26',
    category: 'authentication',
    type: 'block',
    codes: ['5.7.26'],
    examples: [
      "550-5.7.26 Unauthenticated email from example.com is not accepted due to domain's 550-5.7.26 DMARC policy. Please contact the administrator of example.com domain if 550-5.7.26 this was a legitimate mail. To learn about the DMARC initiative, go to 550 5.7.26  https://support.google.com/mail/?p=DmarcRejection 5b1f17b1804b1-4211a2b3c4dsi123456f.12 - gsmtp",
      '550-5.7.26 This mail has been blocked because the sender is unauthenticated. 550-5.7.26 Gmail requires all senders to authenticate with either SPF or DKIM. 550-5.7.26 550-5.7.26  Authentication results: 550-5.7.26  DKIM = did not pass 550-5.7.26  SPF [news.example] with ip: [192.0.2.7] = did not pass 550-5.7.26 550-5.7.26  For instructions on setting up authentication, go to 550 5.7.26  https://support.google.com/mail/answer/81126#authentication 6a1803df08f44-6b0a1b2c3d4si1234567a.12 - gsmtp',
      '550 5.7.26 The (E)MAIL FROM domain [news.example] has an SPF record with a hard fail policy (-all) but it fails to pass SPF checks with the ip: [192.0.2.7]. To best protect our users from spam and phishing, the message has been blocked. - gsmtp',
    ],
  },
  {
    name: 'gmail-not-rfc5322',
    category: 'content',
    type: 'block',
    text: /\bnot RFC 5322 compliant\b|\bMessages missing a valid (?:address in the From|Message-ID)/i,
    examples: [
      '550-5.7.1 This message is not RFC 5322 compliant because it has duplicate headers. To 550-5.7.1 reduce the amount of spam sent to Gmail, this message has been blocked. 550-5.7.1 For more information, go to 550 5.7.1  https://support.google.com/mail/?p=RfcMessageNonCompliant - gsmtp',
      '550-5.7.1 Messages missing a valid Message-ID header are not accepted. For more 550-5.7.1 information, go to 550 5.7.1  https://support.google.com/mail/?p=RfcMessageNonCompliant - gsmtp',
    ],
  },
  {
    name: 'gmail-rate-limited',
    category: 'rate-limited',
    type: 'soft',
    codes: ['4.7.28'],
    examples: [
      '421-4.7.28 Gmail has detected an unusual rate of unsolicited mail originating 421-4.7.28 from your IP address 192.0.2.7. To protect our users from spam, mail sent 421-4.7.28 from your IP address has been temporarily rate limited. To review our 421-4.7.28 bulk email senders guidelines, go to 421 4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError 98e67ed59e1d1-2a1b2c3d4e5si1234567a.12 - gsmtp',
      '421-4.7.28 Gmail has detected this sender exceeded the quota for sending messages 421-4.7.28 that have the same Message-ID:. To best protect our users, the message 421-4.7.28 has been temporarily rejected. For more information, go to 421 4.7.28  https://support.google.com/mail/answer/188131 - gsmtp',
    ],
  },
];

const MICROSOFT_RULES: readonly BounceRule[] = [
  {
    // Outlook.com answers an address it does not have with RFC 5321's generic words.
    name: 'microsoft-mailbox-unavailable',
    category: 'unknown-recipient',
    type: 'hard',
    relay: /\.outlook\.com$/,
    text: /\bRequested action not taken: mailbox unavailable\b/i,
    examples: [
      {
        reply:
          'host outlook-com.olc.protection.outlook.com[52.101.42.3] said: 550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [DS1PEPF00017092.namprd03.prod.outlook.com 2024-05-10T09:12:44.123Z 08DC70B5A1B2C3D4] (in reply to RCPT TO command)',
        dsn: '5.5.0',
        relay: OUTLOOK,
      },
    ],
  },
  {
    // Directory-based edge blocking: the tenant does not know the address.
    name: 'microsoft-access-denied-5.4.1',
    category: 'unknown-recipient',
    type: 'hard',
    codes: ['5.4.1'],
    text: /\bRecipient address rejected: Access denied\b/i,
    examples: [
      '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [AM4PEPF00027A6C.eurprd04.prod.outlook.com 2024-06-14T10:22:31.123Z 08DC8C1B2A3F4E5D]',
      '550 5.4.1 Recipient address rejected: Access denied. For more information see https://aka.ms/EXOSmtpErrors [SN1PEPF0002636E.namprd02.prod.outlook.com 2025-01-20T08:01:02.345Z 08DD3A1B2C3D4E5F]',
    ],
  },
  {
    // Group and recipient delivery restrictions; they say "authentication required" but mean the
    // recipient's own settings, not the sender's SPF or DKIM.
    name: 'microsoft-delivery-restriction',
    category: 'policy',
    type: 'block',
    text: /\bRESOLVER\.RST\./i,
    examples: [
      '550 5.7.133 RESOLVER.RST.SenderNotAuthenticatedForGroup; authentication required; Delivery restriction check failed because the sender was not authenticated when sending to this group',
      '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required',
    ],
  },
  {
    name: 'microsoft-s3150',
    category: 'reputation',
    type: 'block',
    text: /\((?:S3150|S3140)\)|\bpart of their network is on our block list\b/i,
    examples: [
      "550 5.7.1 Unfortunately, messages from [192.0.2.7] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors. [AM4PEPF00025F97.EURPRD83.prod.outlook.com 2024-06-14T10:22:31.123Z 08DC8C1B2A3F4E5D]",
      "550 5.7.1 Unfortunately, messages from [192.0.2.7] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.",
    ],
  },
  {
    name: 'microsoft-banned-sending-ip',
    category: 'reputation',
    type: 'block',
    text: /\bbanned sending IP\b|\bbanned sender\b|\btraffic not accepted from this IP\b/i,
    examples: [
      '550 5.7.606 Access denied, banned sending IP [192.0.2.7]. To request removal from this list please visit https://sender.office.com/ and follow the directions. For more information please go to http://go.microsoft.com/fwlink/?LinkID=526655 AS(1430) [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]',
      '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP. For more information please go to http://go.microsoft.com/fwlink/?LinkId=526653 AS(7171) [BN8NAM11FT050.eop-nam11.prod.protection.outlook.com]',
      '550 5.7.511 Access denied, banned sender[192.0.2.7]. To request removal from this list, forward this message to delist@microsoft.com. For more information please go to http://go.microsoft.com/fwlink/?LinkId=526653 AS(7100)',
    ],
  },
];

const YAHOO_RULES: readonly BounceRule[] = [
  {
    name: 'yahoo-no-account',
    category: 'unknown-recipient',
    type: 'hard',
    text: /\bThis user doesn't have a \S+ account\b/i,
    examples: [
      "554 delivery error: dd This user doesn't have a yahoo.com account (jo@yahoo.com) [0] - mta4012.mail.gq1.yahoo.com",
      "554 delivery error: dd This user doesn't have a att.net account (jo@att.net) [0] - mta1005.mail.bf2.yahoo.com",
    ],
  },
  {
    // A deferral that speaks of volume: rate-limited, not reputation (a 4xx is never a block).
    name: 'yahoo-tss04',
    category: 'rate-limited',
    type: 'soft',
    text: /\[TSS04\]/i,
    examples: [
      '421 4.7.0 [TSS04] Messages from 192.0.2.7 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
    ],
  },
  {
    name: 'yahoo-permanently-deferred',
    category: 'reputation',
    type: 'block',
    text: /\bwill be permanently deferred\b/i,
    examples: [
      '553 5.7.2 [TSS09] All messages from 192.0.2.7 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
      '553 5.7.1 [TS03] All messages from 192.0.2.7 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
    ],
  },
];

const APPLE_RULES: readonly BounceRule[] = [
  {
    // iCloud lets a user deactivate an address; it answers 5.1.1 but names it inactive.
    name: 'apple-inactive-address',
    category: 'mailbox-disabled',
    type: 'hard',
    text: /\binactive email address\b/i,
    examples: ['550 5.1.1 <jo@icloud.com>: inactive email address'],
  },
  {
    // CSnn: the sender's (Cloudmark) score.
    name: 'apple-cs-local-policy',
    category: 'reputation',
    type: 'block',
    text: /\[CS\d\d\] Message rejected due to local policy\b/i,
    examples: [
      '550 5.7.1 [CS01] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
      '554 5.7.1 [CS02] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
    ],
  },
  {
    // HMnn: the message's own score.
    name: 'apple-hm-local-policy',
    category: 'content',
    type: 'block',
    text: /\[HM\d\d\] Message rejected due to local policy\b/i,
    examples: [
      '554 5.7.1 [HM08] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
      '554 5.7.1 [HM07] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
    ],
  },
];

const GATEWAY_RULES: readonly BounceRule[] = [
  {
    name: 'proofpoint-blocked',
    category: 'reputation',
    type: 'block',
    text: /\bBlocked - see https?:\/\/(?:ipcheck|support)\.proofpoint\.com\//i,
    examples: [
      '554 5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.7',
      '550 5.7.1 Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=192.0.2.7',
    ],
  },
  {
    name: 'mimecast-anti-spoofing',
    category: 'authentication',
    type: 'block',
    text: /\bAnti-Spoofing policy\b/i,
    examples: [
      '550 Rejected by header based Anti-Spoofing policy: jo@acme.example - https://community.mimecast.com/docs/DOC-1369#550 [zQ4uY2nkPLqw1aBcDeFgHi.uk12]',
    ],
  },
  {
    name: 'mimecast-envelope-blocked',
    category: 'policy',
    type: 'block',
    text: /\bEnvelope blocked\b/i,
    examples: [
      '550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550 [aBcDeFgHiJkLmNoPqRsTuV.uk34]',
      '550 Envelope blocked - User Domain Entry - https://community.mimecast.com/docs/DOC-1369#550 [aBcDeFgHiJkLmNoPqRsTuV.us56]',
    ],
  },
  {
    // The appliance's per-recipient verdict (its own policy or score), not its reputation list.
    name: 'barracuda-recipient-blocked',
    category: 'policy',
    type: 'block',
    text: /\bpermanent failure for one or more recipients \([^)]*:blocked\)/i,
    examples: ['550 permanent failure for one or more recipients (jo@acme.example:blocked)'],
  },
  {
    // Cisco Secure Email answers a recipient its directory does not hold with 5.1.0.
    name: 'cisco-address-rejected',
    category: 'unknown-recipient',
    type: 'hard',
    codes: ['5.1.0'],
    text: /^Address rejected\b/i,
    examples: ['550 #5.1.0 Address rejected.'],
  },
];

const BLOCKLIST_RULES: readonly BounceRule[] = [
  {
    name: 'spamhaus-listed',
    category: 'reputation',
    type: 'block',
    text: /\bspamhaus\b/i,
    examples: [
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.7',
      '550 5.7.1 Service unavailable, Client host [192.0.2.7] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/192.0.2.7 (AS3130). [BN8NAM11FT050.eop-nam11.prod.protection.outlook.com]',
      "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.7, because the ip is in Spamhaus's list; see https://postmaster.yahooinc.com/error-codes",
      'rejected because 192.0.2.7 is in a black list at zen.spamhaus.org',
    ],
  },
  {
    name: 'spamcop-listed',
    category: 'reputation',
    type: 'block',
    text: /\bspamcop\b/i,
    examples: [
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using bl.spamcop.net; Blocked - see https://www.spamcop.net/bl.shtml?192.0.2.7',
    ],
  },
  {
    name: 'barracuda-listed',
    category: 'reputation',
    type: 'block',
    text: /\bbarracudacentral\b|\bBarracuda Reputation\b/i,
    examples: [
      '554 Service unavailable; Client host [192.0.2.7] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?r=1&ip=192.0.2.7',
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using b.barracudacentral.org; http://www.barracudanetworks.com/reputation/?pr=1&ip=192.0.2.7',
    ],
  },
  {
    name: 'dnsbl-listed',
    category: 'reputation',
    type: 'block',
    text: /\bblocked using\b|\b(?:black|block) ?listed\b|\bin a black ?list\b|\bDNSBLs?\b|\bRBL\b/i,
    examples: [
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using dnsbl.sorbs.net; Currently Sending Spam See: http://www.sorbs.net/lookup.shtml?192.0.2.7',
      '554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using dnsbl-1.uceprotect.net; IP 192.0.2.7 is UCEPROTECT-Level 1 listed. See http://www.uceprotect.net/rblcheck.php?ipr=192.0.2.7',
      '554 5.7.1 resimta-h1p-028482.sys.comcast.net comcast 192.0.2.7 found on one or more DNSBLs, see http://postmaster.comcast.net/smtp-error-codes.php#BL000001',
      '554-gmx.net (mxgmx117) Nemesis ESMTP Service not available 554-No SMTP service 554-IP address is block listed. 554 For explanation visit https://www.gmx.net/mail/senderguidelines?ip=192.0.2.7&c=bl',
    ],
  },
];

const POSTFIX_RULES: readonly BounceRule[] = [
  {
    name: 'postfix-host-not-found',
    category: 'bad-domain',
    type: 'hard',
    replyClass: 5,
    text: /\bHost or domain name not found\b/i,
    examples: [
      {
        reply: 'Host or domain name not found. Name service error for name=gmial.com type=A: Host not found',
        dsn: '5.4.4',
      },
      {
        reply:
          'Host or domain name not found. Name service error for name=mail.acme.example type=AAAA: Host found but no data record of requested type',
        dsn: '5.4.4',
      },
    ],
  },
  {
    name: 'postfix-dns-temporary',
    category: 'infrastructure',
    type: 'soft',
    text: /\bHost or domain name not found\b|\bName service error for name=/i,
    examples: [
      {
        reply:
          'Host or domain name not found. Name service error for name=exmaple.com type=MX: Host not found, try again',
        dsn: '4.4.3',
      },
      {
        reply: 'Name service error for name=acme.example type=MX: Malformed or unexpected name server reply',
        dsn: '4.4.3',
      },
    ],
  },
  {
    name: 'null-mx',
    category: 'bad-domain',
    type: 'hard',
    text: /\bdoes not accept mail \(nullMX\)|\bnull MX\b/i,
    examples: [
      { reply: 'Domain no-mail.example does not accept mail (nullMX)', dsn: '5.1.0' },
      '556 5.1.10 <jo@no-mail.example>: Recipient address rejected: Domain no-mail.example does not accept mail (nullMX)',
      '556 5.1.10 Recipient address has null MX',
    ],
  },
  {
    name: 'postfix-loops-back',
    category: 'bad-domain',
    type: 'hard',
    text: /\bloops back to myself\b/i,
    examples: [{ reply: 'mail for acme.example loops back to myself', dsn: '5.4.6' }],
  },
  {
    name: 'postfix-connect-failed',
    category: 'infrastructure',
    type: 'soft',
    text: /\bconnect to \S+: /i,
    examples: [
      { reply: 'connect to mx.example.net[192.0.2.7]:25: Connection timed out', dsn: '4.4.1' },
      { reply: 'connect to mx.example.net[192.0.2.7]:25: Connection refused', dsn: '4.4.1' },
      { reply: 'connect to mx.example.net[2001:db8::25]:25: Network is unreachable', dsn: '4.4.1' },
      {
        reply: 'delivery temporarily suspended: connect to mx.example.net[192.0.2.7]:25: No route to host',
        dsn: '4.4.1',
      },
    ],
  },
  {
    name: 'postfix-lost-connection',
    category: 'infrastructure',
    type: 'soft',
    text: /\blost connection with \S+ while\b|\bconversation with \S+ timed out while\b/i,
    examples: [
      {
        reply: 'lost connection with mx.example.net[192.0.2.7] while receiving the initial server greeting',
        dsn: '4.4.2',
      },
      { reply: 'lost connection with mx.example.net[192.0.2.7] while sending RCPT TO', dsn: '4.4.2' },
      {
        reply:
          'conversation with mx.example.net[192.0.2.7] timed out while sending end of data -- message may be sent more than once',
        dsn: '4.4.2',
      },
    ],
  },
  {
    name: 'postfix-tls',
    category: 'infrastructure',
    type: 'soft',
    text: /\bTLS is required, but\b|\bCannot start TLS\b|\bServer certificate not (?:verified|trusted)\b/i,
    examples: [
      { reply: 'TLS is required, but was not offered by host mx.example.net[192.0.2.7]', dsn: '4.7.4' },
      { reply: 'Cannot start TLS: handshake failure', dsn: '4.7.5' },
      { reply: 'Server certificate not verified', dsn: '4.7.5' },
      {
        reply:
          'TLS is required, but host mx.example.net[192.0.2.7] refused to start TLS: 454 4.7.0 TLS not available due to local problem',
        dsn: '4.7.0',
      },
    ],
  },
];

const SENDER_RULES: readonly BounceRule[] = [
  {
    name: 'sender-rejected',
    category: 'policy',
    type: 'block',
    text: /\bSender address rejected\b|\bsender verify failed\b|\bDomain of sender address\b/i,
    examples: [
      '553 5.7.1 <news@acme.example>: Sender address rejected: not owned by user r-7f3k2q9d',
      '550-Verification failed for <bounce@news.example> 550-Unrouteable address 550 Sender verify failed',
      '553 5.1.8 <bounce@news.example>... Domain of sender address bounce@news.example does not exist',
    ],
  },
  {
    name: 'rfc3463-sender-address',
    category: 'policy',
    type: 'block',
    codes: ['5.1.7', '5.1.8'],
    examples: [
      '550 5.1.8 Access denied, bad outbound sender. AS(42004)',
      '553 5.1.7 The sender address <bounce@news..example> is not a valid RFC 5321 address. - gsmtp',
    ],
  },
];

const RFC3463_CODE_RULES: readonly BounceRule[] = [
  {
    name: 'rfc3463-5.1.1',
    category: 'unknown-recipient',
    type: 'hard',
    codes: ['5.1.1'],
    examples: [
      "550-5.1.1 The email account that you tried to reach does not exist. Please try 550-5.1.1 double-checking the recipient's email address for typos or 550-5.1.1 unnecessary spaces. For more information, go to 550 5.1.1  https://support.google.com/mail/?p=NoSuchUser 41be03b00d2f7-5c2e07a0b54si1234567a12.123 - gsmtp",
      '550 5.1.1 <jo@icloud.com>: user does not exist',
      '550 5.1.1 <jo@acme.example>... User unknown',
      '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found',
    ],
  },
  {
    name: 'rfc3463-5.1.10',
    category: 'unknown-recipient',
    type: 'hard',
    codes: ['5.1.10'],
    examples: [
      '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient jo@acme.example not found by SMTP address lookup',
    ],
  },
  {
    name: 'rfc3463-5.1.2',
    category: 'bad-domain',
    type: 'hard',
    codes: ['5.1.2'],
    examples: [
      "553-5.1.2 We weren't able to find the recipient domain. Please check for any 553-5.1.2 spelling errors, and make sure you didn't enter any spaces, periods, 553 5.1.2 or other punctuation after the recipient's email address. - gsmtp",
      '550 5.1.2 <jo@exmaple.com>: Recipient address rejected: Domain not found',
    ],
  },
  {
    name: 'rfc3463-5.4.4',
    category: 'bad-domain',
    type: 'hard',
    codes: ['5.4.4'],
    examples: ['554 5.4.4 SMTPSEND.DNS.NonExistentDomain; nonexistent domain'],
  },
  {
    name: 'rfc3463-5.2.1',
    category: 'mailbox-disabled',
    type: 'hard',
    codes: ['5.2.1'],
    examples: [
      '550-5.2.1 The email account that you tried to reach is disabled. Learn more at 550 5.2.1  https://support.google.com/mail/?p=DisabledUser d9443c01a7336-1f2a3b4c5d6si123456.78 - gsmtp',
      '550-5.2.1 The email account that you tried to reach is inactive. For more 550-5.2.1 information, go to 550 5.2.1  https://support.google.com/mail/?p=DisabledUser 98e67ed59e1d1-2a1b2c3d4e5si1234567a.12 - gsmtp',
    ],
  },
  {
    name: 'rfc3463-x.2.2',
    category: 'mailbox-full',
    type: 'soft',
    codes: ['4.2.2', '5.2.2'],
    examples: [
      '452-4.2.2 The email account that you tried to reach is over quota. Please direct 452-4.2.2 the recipient to 452 4.2.2  https://support.google.com/mail/?p=OverQuotaTemp 6a1803df08f44-6b0a1b2c3d4si1234567a.12 - gsmtp',
      "552-5.2.2 The recipient's inbox is out of storage space and inactive. Please direct 552-5.2.2 the recipient to 552 5.2.2  https://support.google.com/mail/?p=OverQuotaPerm 5b1f17b1804b1-4211a2b3c4dsi123456f.12 - gsmtp",
      '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded; Failed to process message due to a permanent exception with message [BeginDiagnosticData]',
    ],
  },
  {
    name: 'rfc3463-5.2.3',
    category: 'message-too-large',
    type: 'block',
    codes: ['5.2.3'],
    examples: [
      "552-5.2.3 Your message exceeded Google's message size limits. Please visit 552-5.2.3  https://support.google.com/mail/?p=MaxSizeError to view our size 552 5.2.3 guidelines. 41be03b00d2f7-5c2e07a0b54si1234567a12.123 - gsmtp",
    ],
  },
  {
    name: 'rfc3463-5.3.4',
    category: 'message-too-large',
    type: 'block',
    codes: ['5.3.4'],
    examples: [
      '552 5.3.4 Message size exceeds fixed limit',
      {
        reply: 'message size 31457280 exceeds size limit 10240000 of server mx.example.net[192.0.2.7]',
        dsn: '5.3.4',
      },
    ],
  },
  {
    // RFC 7372's authentication codes (and Gmail's SPF use of 5.7.27).
    name: 'rfc7372-auth',
    category: 'authentication',
    type: 'block',
    codes: ['5.7.20', '5.7.21', '5.7.22', '5.7.23', '5.7.24', '5.7.25', '5.7.27'],
    examples: [
      '550-5.7.25 [192.0.2.7] The IP address sending this message does not have a 550-5.7.25 PTR record setup, or the corresponding forward DNS entry does not 550-5.7.25 point to the sending IP. As a policy, Gmail does not accept messages 550-5.7.25 from IPs with missing PTR records. For more information, go to 550 5.7.25  https://support.google.com/mail/answer/81126#ip-practices d9443c01a7336-1f2a3b4c5d6si123456.78 - gsmtp',
      "550-5.7.27 This message was blocked because it didn't pass SPF authentication. Gmail 550-5.7.27 requires bulk email senders to authenticate their email with SPF. 550-5.7.27 550-5.7.27  Authentication results: 550-5.7.27  SPF [news.example] with ip: [192.0.2.7] = did not pass 550-5.7.27 550-5.7.27  To set up SPF for your sending domains, go to 550 5.7.27  https://support.google.com/mail/answer/81126#authentication - gsmtp",
      '550 5.7.23 The message was rejected because of Sender Policy Framework violation',
    ],
  },
];

const TEXT_RULES: readonly BounceRule[] = [
  {
    name: 'bad-domain-text',
    category: 'bad-domain',
    type: 'hard',
    text: /\bdomain (?:name )?(?:not found|does not exist|doesn't exist)\b|\bDNS domain \S+ does not exist\b|\bInfoDomainNonexistent\b|\bno such domain\b|\bunknown domain\b|\bunrouteable address\b|\bhost unknown\b|\bNXDOMAIN\b/i,
    examples: [
      '550 Unrouteable address',
      '550 5.4.310 DNS domain acme.example does not exist [Message=InfoDomainNonexistent] [LastAttemptedServerName=acme.example] [AM4PEPF00027A6C.eurprd04.prod.outlook.com]',
    ],
  },
  {
    name: 'unknown-recipient-text',
    category: 'unknown-recipient',
    type: 'hard',
    text: /\b(?:user|recipient|mailbox|address|account) (?:is )?(?:unknown|not found|does not exist|doesn't exist)\b|\baccount that you tried to reach does not exist\b|\bunknown (?:user|recipient|mailbox)\b|\bno such (?:user|recipient|mailbox|account|person)\b|\bmailbox not found\b|\binvalid (?:recipient|mailbox|address)\b|\brecipient not found\b|\bno mailbox here\b/i,
    examples: [
      '550 No Such User Here',
      '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550 [oNpQrStUvWxYzAbCdEfGhI.uk78]',
      '552 1 Requested mail action aborted, mailbox not found',
      'The server was unable to deliver your message (ex: unknown user, invalid syntax, etc).',
      '550-Invalid recipient <jo@acme.example> 550 (#5.1.1)',
    ],
  },
  {
    name: 'mailbox-disabled-text',
    category: 'mailbox-disabled',
    type: 'hard',
    text: /\b(?:account|mailbox|user|address)(?: has been| is)? (?:disabled|deactivated|suspended|inactive|closed|discontinued)\b|\binactive (?:account|mailbox|user)\b|\b(?:disabled|suspended|deactivated) (?:user|account|mailbox)\b/i,
    examples: [
      '554 delivery error: dd Sorry your message to jo@yahoo.com cannot be delivered. This mailbox is disabled (554.30). - mta1234.mail.bf1.yahoo.com',
      '554 delivery error: dd Sorry, your message to jo@yahoo.com cannot be delivered. This account has been disabled or discontinued [#102]. - mta1001.mail.ne1.yahoo.com',
    ],
  },
  {
    name: 'mailbox-full-text',
    category: 'mailbox-full',
    type: 'soft',
    text: /\bover ?quota\b|\bquota exceeded\b|\bmailbox (?:is )?full\b|\bmailbox size limit exceeded\b|\binsufficient storage\b|\bout of storage space\b|\bQuotaExceededException\b/i,
    examples: [
      '552 RCPT TO:<jo@aol.com> Mailbox disk quota exceeded',
      'mailbox is full (MTA-imposed quota exceeded while writing to file /var/mail/jo)',
    ],
  },
  {
    name: 'message-too-large-text',
    category: 'message-too-large',
    type: 'block',
    text: /\bmessage (?:size|length) exceeds\b|\bexceeds? (?:the )?(?:fixed |maximum |allowed )?(?:message )?size limit\b|\bmessage (?:file )?(?:is )?too (?:big|large)\b|\bmessage size limits?\b|\bRecipSizeLimit\b/i,
    examples: ['552 Message size exceeds maximum permitted'],
  },
  {
    name: 'authentication-text',
    category: 'authentication',
    type: 'block',
    text: /\bDMARC\b|\bSPF\b|\bDKIM\b|\bunauthenticated\b|\bauthentication (?:checks?|results?|requirements?|level|failed|failure)\b|\bsender policy framework\b|\bPTR record\b|\breverse DNS\b|\bspoof(?:ed|ing)\b/i,
    examples: [
      '550 5.7.509 Access denied, sending domain acme.example does not pass DMARC verification and has a DMARC policy of reject. [AM4PEPF00027A6C.eurprd04.prod.outlook.com 2024-06-14T10:22:31.123Z 08DC8C1B2A3F4E5D]',
      "550 5.7.515 Access denied, sending domain [acme.example] doesn't meet the required authentication level. The sender's domain in the 5322.From address doesn't meet the authentication requirements defined for the sender. To learn more about this error, see https://aka.ms/EXOSmtpErrors",
      '550 5.7.9 This mail has been blocked because the sender is unauthenticated. Yahoo requires all senders to authenticate with either SPF or DKIM.',
      "554 5.7.1 Your message was rejected due to acme.example's DMARC policy. See https://support.apple.com/en-us/HT204137",
      '553-SPF (Sender Policy Framework) domain authentication 553-fail. Refer to the Troubleshooting page at 553-http://www.symanteccloud.com/troubleshooting for more 553 information. (#5.7.1)',
    ],
  },
  {
    name: 'content-text',
    category: 'content',
    type: 'block',
    text: /\bvirus\b|\bmalware\b|\binfected\b|\bphishing\b|\bpotential security issue\b|\b(?:attachment|file)s?(?: type)? (?:is |are )?(?:not allowed|not permitted|blocked|prohibited|forbidden)\b|\bbanned (?:attachment|file|content)\b|\bmessage content rejected\b|\bcontent (?:rejected|filter(?:ing)?)\b|\bspam content\b|\b(?:detected|identified|classified|flagged|considered|rejected) as spam\b|\bspam message rejected\b|\bsuspicion of spam\b/i,
    examples: [
      '552-5.7.0 This message was blocked because its content presents a potential 552-5.7.0 security issue. Please visit 552-5.7.0  https://support.google.com/mail/?p=BlockedMessage to review our 552 5.7.0 message content and attachment content guidelines. 6a1803df08f44-6b0a1b2c3d4si1234567a.12 - gsmtp',
      '550 5.7.350 Remote server returned message detected as spam -> 554 5.7.1 Service unavailable',
      '550 spam message rejected. Please visit http://help.mail.ru/notspam-support/id?c=AbCdEfGhIjKlMnOpQrStUvWxYz or report details to abuse@corp.mail.ru. Error code: 0123456789ABCDEF. ID: 0123456789ABCDEF.',
      '554 5.7.1 [2] Message rejected under suspicion of SPAM; https://ya.cc/1IrBc 1234567890-AbCdEfGhIj-12',
      'The message was delivered, but was either blocked by the user, or classified as spam, bulk mail, or had rejected content.',
    ],
  },
  {
    name: 'reputation-text',
    category: 'reputation',
    type: 'block',
    text: /\b(?:poor|bad|low|negative) (?:sender |sending |IP )?reputation\b|\breputation (?:is )?too low\b/i,
    examples: [
      "554 Your access to this mail system has been rejected due to the sending MTA's poor reputation. If you believe that this failure is in error, please contact the intended recipient via alternate means.",
    ],
  },
  {
    name: 'policy-text',
    category: 'policy',
    type: 'block',
    text: /\badministrative prohibition\b|\breject(?:ed)? due to (?:security |local )?polic(?:y|ies)\b/i,
    examples: [
      '550 Administrative prohibition',
      '554 Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554 [aBcDeFgHiJkLmNoPqRsTuV.uk90]',
      '554-Transaction failed 554-Reject due to policy restrictions. 554 For explanation visit https://web.de/email/senderguidelines?ip=192.0.2.7&c=hi',
    ],
  },
  {
    name: 'rate-limited-text',
    category: 'rate-limited',
    type: 'soft',
    text: /\brate[- ]?limit|\bunusual rate\b|\btoo many (?:concurrent )?(?:connections|sessions|messages|mails|emails)\b|\btoo much (?:e-?)?mail\b|\bthrottl|\bserver busy\b|\bexcessive (?:volume|traffic|connections)\b|\bmax(?:imum)? (?:number of )?(?:messages?|connections?) (?:per|reached|exceeded)\b|\bconcurrent connections\b|\breceived this hour\b/i,
    examples: [
      '451 4.7.500 Server busy. Please try again later from [192.0.2.7]. (S77719) [BN8NAM11FT050.eop-nam11.prod.protection.outlook.com 2024-06-14T10:22:31.123Z 08DC8C1B2A3F4E5D]',
      '451 4.7.650 The mail server [192.0.2.7] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S775) [BN8NAM11FT050.eop-nam11.prod.protection.outlook.com]',
      '421 4.3.2 The maximum number of concurrent connections has exceeded a limit, closing transmission channel',
      '421 4.7.1 Messages to jo@icloud.com deferred due to excessive volume. Try again later - https://support.apple.com/en-us/HT204137',
      '452 Too many recipients received this hour',
      '421-4.7.0 [192.0.2.7      15] Our system has detected an unusual rate of 421-4.7.0 unsolicited mail originating from your IP address. To protect our 421-4.7.0 users from spam, mail sent from your IP address has been temporarily 421-4.7.0 rate limited. Please visit 421-4.7.0  https://support.google.com/mail/?p=UnsolicitedRateLimitError to 421 4.7.0 review our Bulk Email Senders Guidelines. 41be03b00d2f7-5c2e07a0b54si1234567a12.123 - gsmtp',
    ],
  },
  {
    name: 'greylisted',
    category: 'other',
    type: 'soft',
    replyClass: 4,
    text: /\bgr[ae]y[- ]?list/i,
    examples: [
      '450 4.2.0 <jo@example.net>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.net.html',
      '451 4.7.1 Greylisting in action, please come back later',
    ],
  },
  {
    name: 'tls-required',
    category: 'infrastructure',
    type: 'soft',
    text: /\bTLS required\b|\bmust issue a STARTTLS\b|\bSTARTTLS (?:is )?required\b|\bencryption required\b/i,
    examples: [
      '421-4.7.0 TLS required for RCPT domain, closing connection. For more information, go to 421 4.7.0  https://support.google.com/a/answer/9795993 - gsmtp',
      '530 5.7.0 Must issue a STARTTLS command first. - gsmtp',
    ],
  },
  {
    // A temporary refusal about the sender: soft, and not a rate (see the top of this file).
    name: 'temporary-policy',
    category: 'other',
    type: 'soft',
    replyClass: 4,
    text: /\bblock(?:ed|list(?:ed)?)\b|\blisted\b|\breputation\b|\bspam\b|\bunsolicited\b|\bpolic(?:y|ies)\b|\bauthenticat|\bDMARC\b|\bSPF\b|\bDKIM\b|\bPTR\b|\bcomplaints?\b|\bsuspicious\b|\bnot (?:allowed|permitted)\b|\b(?:white|allow)list\b|\bcannot find your\b/i,
    examples: [
      "451-4.7.26 Unauthenticated email from acme.example is not accepted due to domain's 451-4.7.26 DMARC policy, but temporary DNS failures prevent authentication. Please 451-4.7.26 contact the administrator of acme.example domain if this was a legitimate 451 4.7.26 mail. - gsmtp",
      '421-4.7.0 This message is suspicious due to the very low reputation of the sending 421-4.7.0 domain. To best protect our users from spam, the message has been 421 4.7.0 blocked. - gsmtp',
      '421 4.7.0 [TS02] Messages from 192.0.2.7 temporarily deferred due to user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
      '450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.7]',
      '421-4.7.0 IP not in whitelist for RCPT domain, closing connection. - gsmtp',
    ],
  },
  {
    name: 'temporary-unavailable',
    category: 'infrastructure',
    type: 'soft',
    replyClass: 4,
    text: /\b(?:service|resources?|system) (?:is |are )?(?:temporarily )?(?:unavailable|not available)\b|\btemporarily unavailable\b|\btemporary (?:system|server|local) (?:problem|error|failure)\b|\btry again later, closing connection\b/i,
    examples: [
      '451 Resources temporarily unavailable. Please try again later [#4.16.1].',
      '451 Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
      '451 4.7.1 Service unavailable - try again later',
      '450 4.7.1 <jo@acme.example>: Recipient address rejected: Service is unavailable',
      '421-4.3.0 Temporary System Problem. Try again later. For more information, go to 421 4.3.0  https://support.google.com/a/answer/3221692 - gsmtp',
      '451 Temporary local problem - please try later',
    ],
  },
];

const GENERIC_CODE_RULES: readonly BounceRule[] = [
  {
    name: 'rfc3463-5.6.x',
    category: 'content',
    type: 'block',
    codes: ['5.6.'],
    examples: ['554-5.6.0 Mail message is malformed. Not accepted. - gsmtp', '554 5.6.1 Media not supported'],
  },
  {
    name: 'rfc3463-5.7.x',
    category: 'policy',
    type: 'block',
    codes: ['5.7.'],
    examples: [
      '554 5.7.1 <jo@example.net>: Relay access denied',
      '550-5.7.1 The user or domain that you are sending to (or from) has a policy that 550-5.7.1 prohibits the mail that you sent. Please contact your domain 550-5.7.1 administrator for further details. For more information, go to 550 5.7.1  https://support.google.com/a/answer/172179 - gsmtp',
      '554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes',
    ],
  },
  {
    name: 'rfc3463-4.4.x',
    category: 'infrastructure',
    type: 'soft',
    codes: ['4.4.'],
    examples: [
      '451 4.4.62 Mail sent to the wrong Office 365 region. ATTR35. For more information please go to https://go.microsoft.com/fwlink/?linkid=865268',
      '451 4.4.0 DNS query failed',
      '452 4.4.5 Insufficient disk space; try again later',
    ],
  },
];

export const BOUNCE_RULES: readonly BounceRule[] = [
  ...GMAIL_RULES,
  ...MICROSOFT_RULES,
  ...YAHOO_RULES,
  ...APPLE_RULES,
  ...GATEWAY_RULES,
  ...BLOCKLIST_RULES,
  ...POSTFIX_RULES,
  ...SENDER_RULES,
  ...RFC3463_CODE_RULES,
  ...TEXT_RULES,
  ...GENERIC_CODE_RULES,
];
