import { Logger } from '@nestjs/common';
import { Socket } from 'node:net';
import { TcpListener } from '../../common/net/tcp-listener';
import { milterMessages } from '../../modules/metrics/metrics';
import { BodyHash, dkimSignature, privateKeyOf, SIGNED_HEADERS, SigningKey } from './dkim-signature';
import { FromProblem, parseFromHeader, printableDomain } from './from-header';
import { MilterDecisions } from './milter-decisions';
import {
  Action,
  Command,
  ConnectInfo,
  continueReply,
  decodeConnect,
  decodeHeader,
  decodeMacros,
  decodeOptionNegotiation,
  encodeOptionNegotiation,
  Frame,
  FrameReader,
  insertHeader,
  MAX_MILTER_FRAME_BYTES,
  MILTER_VERSION,
  MilterProtocolError,
  NO_REPLY_FLAG,
  Protocol,
  replyCode,
  splitStrings,
  tempfailReply,
} from './milter-protocol';

export interface MilterServerOptions {
  /** RELAY_REQUIRE_VERIFIED_DOMAIN: refuse a From: domain the sending company has not verified (default true). */
  requireVerifiedDomain?: boolean;
  /** A frame announcing more than this closes the connection (Postfix sends body chunks of 65,535 bytes). */
  maxFrameBytes?: number;
  /** A message whose headers pass this many bytes closes the connection (Postfix then tempfails it). */
  maxHeaderBytes?: number;
  /**
   * SMTP_LINE_LENGTH_LIMIT, equal to Postfix's `smtp_line_length_limit`: the message is signed as
   * Postfix's SMTP client will send it, lines longer than this folded (line-folding.ts); 0 as it is.
   */
  smtpLineLengthLimit?: number;
}

/**
 * What the milter asks Postfix for. Events: no HELO, RCPT, DATA or unknown commands; no reply
 * to CONNECT, MAIL, each header, end of headers or body chunks, so Postfix streams a message
 * without waiting and only end of message is answered. Each flag is taken only when Postfix
 * offers it (milter_protocol), and the replies follow what was agreed.
 */
export const WANTED_PROTOCOL =
  Protocol.NoHelo |
  Protocol.NoRcpt |
  Protocol.NoData |
  Protocol.NoUnknown |
  Protocol.NoReplyConnect |
  Protocol.NoReplyHelo |
  Protocol.NoReplyMail |
  Protocol.NoReplyRcpt |
  Protocol.NoReplyData |
  Protocol.NoReplyUnknown |
  Protocol.NoReplyHeader |
  Protocol.NoReplyEndOfHeaders |
  Protocol.NoReplyBody;

/** Only the DKIM-Signature is added (SMFIR_INSHEADER needs the add-headers action). */
export const WANTED_ACTIONS = Action.AddHeaders;

/**
 * DKIM signing and From alignment for Postfix (`smtpd_milters`, `non_smtpd_milters`): the
 * milter protocol version 6 over TCP, several messages a connection. Every message gets one
 * answer at its end: accepted (with its DKIM-Signature at the top when its From: domain is the
 * sending company's), refused (550), or tempfail when the service cannot decide.
 */
export class MilterServer extends TcpListener<MilterConnection> {
  private readonly logger = new Logger(MilterServer.name);
  private readonly options: Required<MilterServerOptions>;

  constructor(
    private readonly decisions: MilterDecisions,
    options: MilterServerOptions = {},
  ) {
    super();
    this.options = {
      requireVerifiedDomain: options.requireVerifiedDomain ?? true,
      maxFrameBytes: options.maxFrameBytes ?? MAX_MILTER_FRAME_BYTES,
      maxHeaderBytes: options.maxHeaderBytes ?? 1024 * 1024,
      smtpLineLengthLimit: options.smtpLineLengthLimit ?? 0,
    };
  }

  protected accept(socket: Socket, stalled: () => void): MilterConnection {
    socket.setNoDelay(true);
    return new MilterConnection(socket, this.decisions, this.options, this.logger, stalled);
  }
}

type Outcome =
  | { kind: 'accept' }
  | { kind: 'sign'; key: SigningKey }
  | { kind: 'refuse'; reply: string; reason: MilterRefusal }
  | { kind: 'tempfail' };

/** Why the milter refused a message (the `reason` of `milter_messages_total`). */
type MilterRefusal =
  | 'not_authenticated'
  | 'account_refused'
  | 'from_header_count'
  | `from_${FromProblem}`
  | 'from_domain_not_verified';

/** The replies of the From: header forms no receiver can align (integrations.md "From alignment"). */
const FROM_PROBLEM_REPLIES: Record<FromProblem, string> = {
  no_address: '550 5.6.0 From header has no address',
  group: '550 5.6.0 From header is a group, not a mailbox',
  quoted_at: '550 5.6.0 From address has a quoted local part holding @',
  display_name: '550 5.7.1 From display name names another address',
};

/** The headers kept of a message: those signed (From among them); the others are only counted. */
const KEPT_HEADERS: ReadonlySet<string> = new Set(SIGNED_HEADERS.map((name) => name.toLowerCase()));

const ACCEPT: Outcome = { kind: 'accept' };
const TEMPFAIL: Outcome = { kind: 'tempfail' };

/** One message from MAIL to end of message or abort. */
class Message {
  readonly headers: Array<{ name: string; value: string }> = [];
  headerBytes = 0;
  bodyHash: BodyHash | null;
  /** Decided from the envelope and headers at end of headers, while the body still arrives. */
  outcome: Promise<Outcome> | null = null;
  settled: Outcome | null = null;

  constructor(
    /** The envelope sender (MAIL FROM without its brackets; '' for the null sender). */
    readonly sender: string,
    /** Mail Postfix makes itself (no SMTP client: pickup, notices): accepted as it is, nothing kept. */
    readonly asIs: boolean,
    smtpLineLengthLimit: number,
  ) {
    this.bodyHash = asIs ? null : new BodyHash(smtpLineLengthLimit);
  }

  /** Whether the body still matters (the message may be signed). */
  get hashing(): boolean {
    return this.bodyHash !== null && (this.settled === null || this.settled.kind === 'sign');
  }
}

class MilterConnection {
  private readonly reader: FrameReader;
  private protocol = 0;
  private connect: ConnectInfo | null = null;
  private readonly macros = new Map<string, Map<string, string>>();
  private message: Message | null = null;
  private busy = false;
  private waitingForDrain = false;
  private ending = false;

  constructor(
    private readonly socket: Socket,
    private readonly decisions: MilterDecisions,
    private readonly options: Required<MilterServerOptions>,
    private readonly logger: Logger,
    /** Told when reading stops until the client reads its replies, nothing being answered. */
    private readonly stalled: () => void,
  ) {
    this.reader = new FrameReader(options.maxFrameBytes);
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      this.pump();
    });
    socket.on('drain', () => {
      this.waitingForDrain = false;
      this.pump();
    });
    socket.on('error', () => socket.destroy());
  }

  end(): void {
    this.ending = true;
    if (!this.busy) this.socket.end();
  }

  /**
   * Handles the frames received, one at a time: while an end of message is being answered, or
   * the client does not read its replies, the socket is not read, so neither a fast nor a
   * stalled Postfix grows memory beyond one socket read.
   */
  private pump(): void {
    while (!this.busy && !this.waitingForDrain && !this.ending && !this.socket.destroyed) {
      let frame: Frame | null;
      let pending: Promise<void> | undefined;
      try {
        frame = this.reader.next();
        if (frame === null) {
          this.socket.resume();
          return;
        }
        pending = this.handle(frame);
      } catch (e: unknown) {
        if (!(e instanceof MilterProtocolError)) throw e;
        this.logger.warn(`Milter protocol error (${e.message}): closing the connection`);
        this.socket.destroy();
        return;
      }
      if (pending) {
        this.busy = true;
        void pending.finally(() => {
          this.busy = false;
          if (this.ending) this.socket.end();
          else this.pump();
        });
      }
    }
    this.socket.pause();
    if (this.waitingForDrain && !this.busy && !this.socket.destroyed) this.stalled();
  }

  private handle({ command, data }: Frame): Promise<void> | undefined {
    switch (command) {
      case Command.OptionNegotiation:
        return this.negotiate(data);
      case Command.Macro: {
        const { event, macros } = decodeMacros(data);
        this.macros.set(event, macros);
        return;
      }
      case Command.Connect:
        this.connect = decodeConnect(data);
        break;
      case Command.Mail:
        this.message = this.startMessage(splitStrings(data)[0] ?? '');
        break;
      case Command.Header:
        this.keepHeader(data);
        break;
      case Command.EndOfHeaders:
        this.decide();
        break;
      case Command.Body:
        this.hash(data);
        break;
      case Command.EndOfMessage:
        if (data.length > 0) this.hash(data);
        return this.finish();
      case Command.Abort:
        this.resetMessage();
        return;
      case Command.QuitNewConnection:
        this.resetMessage();
        this.connect = null;
        this.macros.clear();
        return;
      case Command.Quit:
        this.ending = true;
        this.socket.end();
        return;
      case Command.Helo:
      case Command.Rcpt:
      case Command.Data:
      case Command.Unknown:
        break;
      default:
        throw new MilterProtocolError(`unknown command ${JSON.stringify(command)}`);
    }
    if ((this.protocol & NO_REPLY_FLAG[command]) === 0) this.write(continueReply());
  }

  private negotiate(data: Buffer): undefined {
    const offer = decodeOptionNegotiation(data);
    if (offer.version < 2) throw new MilterProtocolError(`milter protocol version ${offer.version}`);
    if ((offer.actions & WANTED_ACTIONS) !== WANTED_ACTIONS) {
      throw new MilterProtocolError('the MTA does not let a milter add headers');
    }
    this.protocol = offer.protocol & WANTED_PROTOCOL;
    this.write(
      encodeOptionNegotiation({
        version: Math.min(offer.version, MILTER_VERSION),
        actions: WANTED_ACTIONS,
        protocol: this.protocol,
      }),
    );
    return undefined;
  }

  private macro(name: string): string | undefined {
    for (const event of [Command.Mail, Command.Connect, Command.Helo, Command.Rcpt, Command.Data]) {
      const value = this.macros.get(event)?.get(name);
      if (value) return value;
    }
    return undefined;
  }

  /**
   * Every message an SMTP client submits is judged, the null sender's included (a bounce a
   * client writes is still the client's mail); only Postfix's own has no client.
   */
  private startMessage(mailFrom: string): Message {
    const sender = mailFrom.replace(/^<(.*)>$/, '$1').trim();
    return new Message(sender, this.clientAddress() === undefined, this.options.smtpLineLengthLimit);
  }

  /** The SMTP client's address; none for Postfix's own submissions (pickup, no real peer: port 0). */
  private clientAddress(): string | undefined {
    const c = this.connect;
    if (!c || (c.family !== '4' && c.family !== '6') || c.port === 0 || !c.address) return undefined;
    return c.address.replace(/^IPv6:/i, '');
  }

  private currentMessage(): Message {
    this.message ??= this.startMessage('');
    return this.message;
  }

  /**
   * Counts a header frame (`name NUL value NUL`) against the message's limit and keeps it only
   * when it is signed: the value of any other header is never made a string, so a flood of
   * headers leaves no garbage but the socket reads.
   */
  private keepHeader(data: Buffer): void {
    const message = this.currentMessage();
    if (message.asIs) return;
    // `Name: value` and its CRLF, as the header block holds it.
    message.headerBytes += data.length + 2;
    if (message.headerBytes > this.options.maxHeaderBytes) {
      throw new MilterProtocolError(`headers over ${this.options.maxHeaderBytes} bytes`);
    }
    const nameEnd = data.indexOf(0);
    const name = data.toString('latin1', 0, nameEnd < 0 ? data.length : nameEnd);
    if (KEPT_HEADERS.has(name.toLowerCase())) message.headers.push(decodeHeader(data));
    else if (!name) throw new MilterProtocolError('header without a name');
  }

  private hash(chunk: Buffer): void {
    const message = this.currentMessage();
    if (message.hashing) message.bodyHash?.update(chunk);
  }

  private decide(): void {
    const message = this.currentMessage();
    if (message.outcome) return;
    message.outcome = this.outcomeOf(message).then(
      (outcome) => (message.settled = outcome),
      (e: unknown) => {
        this.logger.error({ err: e }, 'Milter decision failed: tempfail');
        return (message.settled = TEMPFAIL);
      },
    );
  }

  /**
   * The company is the one the policy authorised for this session, by the same rule from the same
   * facts: the SASL username, else the client address (the envelope sender deciding among
   * companies sharing a network). The From: header never decides it; it must be a plain mailbox
   * of a domain that company verified, and only that domain's key signs.
   */
  private async outcomeOf(message: Message): Promise<Outcome> {
    if (message.asIs) return ACCEPT;
    const company = await this.decisions.sendingCompany({
      relayUsername: this.macro('auth_authen'),
      clientAddress: this.clientAddress(),
      sender: message.sender,
    });
    if (company === null) {
      return { kind: 'refuse', reply: '550 5.7.1 Authentication required', reason: 'not_authenticated' };
    }
    if (company.refusal !== null) {
      return { kind: 'refuse', reply: `550 5.7.1 ${company.refusal}`, reason: 'account_refused' };
    }
    const froms = message.headers.filter((h) => h.name.toLowerCase() === 'from');
    if (froms.length !== 1) {
      return {
        kind: 'refuse',
        reply: `550 5.6.0 Message has ${froms.length} From headers, not one`,
        reason: 'from_header_count',
      };
    }
    const from = parseFromHeader(froms[0].value);
    if ('problem' in from) {
      // A From: with no mailbox at all is refused whatever RELAY_REQUIRE_VERIFIED_DOMAIN says.
      if (!this.options.requireVerifiedDomain && from.problem !== 'no_address') return ACCEPT;
      return { kind: 'refuse', reply: FROM_PROBLEM_REPLIES[from.problem], reason: `from_${from.problem}` };
    }
    const { addresses } = from;
    const domains = [...new Set(addresses.map((a) => a.domain).filter((d): d is string => d !== null))];
    const owners = new Map(
      await Promise.all(domains.map(async (d) => [d, await this.decisions.ownerOf(d)] as const)),
    );
    const foreign = addresses.find((a) => a.domain === null || owners.get(a.domain) !== company.id);
    if (foreign !== undefined) {
      if (!this.options.requireVerifiedDomain) return ACCEPT;
      const shown = printableDomain(foreign.domain ?? foreign.written);
      this.logger.log(`Milter refused From domain ${shown} (company ${company.id})`);
      return {
        kind: 'refuse',
        reply: `550 5.7.1 From domain ${shown} is not verified for this account`,
        reason: 'from_domain_not_verified',
      };
    }

    const domain = addresses[0].domain as string;
    const key = await this.decisions.signingKey(domain);
    if (!key) {
      this.logger.error(`No DKIM key for the verified domain ${domain}: tempfail`);
      return TEMPFAIL;
    }
    return {
      kind: 'sign',
      key: { domain, selector: key.selector, privateKey: privateKeyOf(key.privateKeyPem) },
    };
  }

  private async finish(): Promise<void> {
    const message = this.currentMessage();
    this.decide();
    const outcome = await (message.outcome as Promise<Outcome>);
    this.message = null;
    switch (outcome.kind) {
      case 'accept':
        milterMessages.inc({ outcome: 'accepted', reason: '' });
        return this.write(continueReply());
      case 'refuse':
        milterMessages.inc({ outcome: 'refused', reason: outcome.reason });
        return this.write(replyCode(outcome.reply));
      case 'tempfail':
        milterMessages.inc({ outcome: 'tempfailed', reason: '' });
        return this.write(tempfailReply());
      case 'sign':
        try {
          const header = await dkimSignature(
            headerBlock(message.headers),
            (message.bodyHash as BodyHash).digest(),
            outcome.key,
            new Date(),
            this.options.smtpLineLengthLimit,
          );
          this.write(Buffer.concat([insertHeader(0, header.name, header.value), continueReply()]));
          milterMessages.inc({ outcome: 'signed', reason: '' });
        } catch (e: unknown) {
          milterMessages.inc({ outcome: 'tempfailed', reason: '' });
          this.logger.error({ err: e }, `DKIM signing for ${outcome.key.domain} failed: tempfail`);
          this.write(tempfailReply());
        }
    }
  }

  private resetMessage(): void {
    this.message = null;
    for (const event of [
      Command.Mail,
      Command.Rcpt,
      Command.Data,
      Command.EndOfHeaders,
      Command.EndOfMessage,
    ]) {
      this.macros.delete(event);
    }
  }

  private write(bytes: Buffer): void {
    if (this.socket.destroyed) return;
    if (!this.socket.write(bytes)) this.waitingForDrain = true;
  }
}

/** The headers as mailauth reads a message's header block: `Name: value`, folded lines and ends CRLF. */
function headerBlock(headers: Array<{ name: string; value: string }>): Buffer {
  return Buffer.from(
    headers.map((h) => `${h.name}: ${h.value.replace(/\r?\n/g, '\r\n')}\r\n`).join('') + '\r\n',
    'latin1',
  );
}
