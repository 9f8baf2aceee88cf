import { normaliseIp } from '../../../common/net/ip-address';

/**
 * Postfix's log lines as pure functions (integrations.md "Log shipper"): the syslog prefix, then
 * the message forms the clean log is built from. Nothing here throws on input: a line that is
 * not understood is `null`, and the caller counts it as skipped.
 */

/** A syslog line split: its time when it carries one, the host, the program and the message. */
export interface SyslogLine {
  at?: Date;
  host?: string;
  /** e.g. `postfix/smtpd`, `postfix/submission/smtpd`, `postfix-out/smtp`. */
  program: string;
  pid?: number;
  message: string;
}

export type DeliveryStatus = 'sent' | 'deferred' | 'bounced' | 'expired';

/**
 * smtpd's (or cleanup's) line for a refused command: `<action>: <stage> from host[ip]: <reply>;
 * from=<…> to=<…> proto=… helo=<…>`. Everything after `from=<` is what the SMTP client sent: data,
 * never identity.
 */
export interface RejectFields {
  /** The SMTP stage: `RCPT`, `MAIL`, `DATA`, `END-OF-MESSAGE`, … */
  stage: string;
  clientHost: string;
  clientIp: string;
  dsn?: string;
  /** The reply text after its code and enhanced status code. */
  response: string;
  from: string;
  to?: string;
  proto?: string;
  helo?: string;
}

export type PostfixEvent =
  | {
      kind: 'client';
      queueId: string;
      clientHost: string;
      clientIp: string;
      saslMethod?: string;
      saslUsername?: string;
    }
  | { kind: 'message-id'; queueId: string; messageId: string }
  | { kind: 'from'; queueId: string; from: string; size?: number; nrcpt?: number }
  | { kind: 'expired'; queueId: string; from: string }
  | {
      kind: 'delivery';
      queueId: string;
      to: string;
      origTo?: string;
      relay?: string;
      delay?: number;
      delays?: string;
      dsn?: string;
      status: DeliveryStatus;
      /** The text in parentheses after the status: the remote server's reply or Postfix's reason. */
      response?: string;
      /** The id the next hop gave in its reply (`queued as F12DF84004`, `Ok id=…`). */
      remoteQueueId?: string;
    }
  | { kind: 'removed'; queueId: string }
  | ({ kind: 'noqueue-reject'; code: number } & RejectFields)
  /**
   * A refusal inside an open transaction: smtpd's `QID: reject: RCPT from …` (one recipient
   * refused) or any `QID: reject:`/`QID: milter-reject:` stage, and cleanup's `QID: milter-reject:
   * END-OF-MESSAGE from …` (a milter refused the message; Postfix logs its reply without the code).
   */
  | ({ kind: 'queue-reject'; queueId: string; code?: number } & RejectFields);

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `Nov 21 18:58:35` (day may be space-padded), optional fraction. */
const BSD_TIME = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))? /;
/** RFC 3339 / ISO 8601 with a zone, or without one (read in the given zone). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})? /;
/** `program[pid]: message` (pid optional). A hostname never ends with `:`, so this is not `host …`. */
const PROGRAM = /^([\w./-]+?)(?:\[(\d+)\])?: (.*)$/s;
/** Postfix queue ids: short hex (`AA10A2839B`) or the long form (`4Dq3m53kSRz1xJ9`). */
const QUEUE_ID = /^([0-9A-Za-z]{5,20}): (.*)$/s;

/**
 * Splits a syslog line: an optional time, then `host program[pid]: message` or, as a shipper
 * that keeps the host apart sends it, `program[pid]: message` (no host). A time without a year
 * takes the year that puts it nearest to `now`; a time without a zone is read in `timeZone` (an
 * IANA name). A time that does not exist (`Feb 30`, month 13, 24:00) or a bare message is null.
 */
export function parseSyslogLine(line: string, opts: { now: Date; timeZone: string }): SyslogLine | null {
  let rest = withoutLineEnd(line);
  let at: Date | null | undefined;
  // A BSD time starts with its month's capital, an ISO time with a digit.
  const first = rest.charCodeAt(0);
  const bsd = first >= 65 && first <= 90 ? BSD_TIME.exec(rest) : null;
  const iso = first >= 48 && first <= 57 ? ISO_TIME.exec(rest) : null;
  if (bsd) {
    at = bsdTime(bsd, opts);
    rest = rest.slice(bsd[0].length);
  } else if (iso) {
    at = isoTime(iso, opts.timeZone);
    rest = rest.slice(iso[0].length);
  }
  if (at === null) return null;
  let host: string | undefined;
  // `program[pid]: ` holds no space, so the line starts with it only if its first space follows a `:`.
  const space = rest.indexOf(' ');
  let program = space > 0 && rest.charCodeAt(space - 1) === COLON ? PROGRAM.exec(rest) : null;
  if (!program) {
    if (space <= 0) return null;
    host = rest.slice(0, space);
    program = PROGRAM.exec(rest.slice(space + 1));
    if (!program) return null;
  }
  return {
    at,
    host,
    program: program[1],
    pid: program[2] === undefined ? undefined : Number(program[2]),
    message: program[3],
  };
}

const COLON = 0x3a;

/** The line without its `\n` or `\r\n` at the end. */
function withoutLineEnd(line: string): string {
  if (line.charCodeAt(line.length - 1) !== 0x0a) return line;
  return line.slice(0, line.charCodeAt(line.length - 2) === 0x0d ? -2 : -1);
}

/** The event of a Postfix program's message, or null when the program or the form is not one we use. */
export function parsePostfixMessage(program: string, message: string): PostfixEvent | null {
  if (!/^postfix[\w-]*\//.test(program)) return null;
  const daemon = program.slice(program.lastIndexOf('/') + 1);
  const q = QUEUE_ID.exec(message);
  if (!q) return null;
  const [, queueId, text] = q;
  if (queueId === 'NOQUEUE') {
    const refused = daemon === 'smtpd' ? reject(text, ['reject']) : null;
    return refused?.code === undefined ? null : { kind: 'noqueue-reject', ...refused, code: refused.code };
  }
  switch (daemon) {
    case 'smtpd': {
      const client = clientLine(queueId, text);
      if (client) return client;
      const refused = reject(text, ['reject', 'milter-reject']);
      return refused && { kind: 'queue-reject', queueId, ...refused };
    }
    case 'cleanup': {
      const id = /^message-id=(.*)$/s.exec(text);
      if (id) return { kind: 'message-id', queueId, messageId: stripAngles(id[1]) };
      const refused = reject(text, ['milter-reject']);
      return refused && { kind: 'queue-reject', queueId, ...refused };
    }
    case 'qmgr':
      return queueManager(queueId, text);
    default:
      return delivery(queueId, text);
  }
}

/**
 * `client=host[ip]` with what Postfix appends (smtpd.c, `mail_open_stream`), in this order: `,
 * sasl_method=M, sasl_username=U`, `, sasl_sender=S`, `, orig_queue_id=Q, orig_client=host[ip]`
 * (XFORWARD). The one line that says who sent a queue (integrations.md "Who sent it"): its host is a checked DNS
 * name or `unknown`, the rest Postfix's own, and it must be the whole message, so a `client=` or
 * `sasl_username=` an SMTP client wrote elsewhere is never read.
 *
 * The username is the first `sasl_username=` field, the one right after `sasl_method=` (relay
 * usernames hold no `,` and no space). `sasl_sender=` is the raw `AUTH=` parameter of the
 * client's MAIL FROM: any printable characters, `=`, `,` and `, sasl_username=…` included; it is
 * the last field we read and runs to the end of the line (XFORWARD fields after it included), never
 * read as identity.
 */
const CLIENT_LINE =
  /^client=([^\s[\]]+)\[([^\s[\]]+)\](?::\d+)?(?:, sasl_method=([^\s,]+)(?:, sasl_username=([^\s,]+))?)?(?:, sasl_sender=.*|(?:, orig_queue_id=[^\s,]+)?(?:, orig_client=\S+)?)$/s;

function clientLine(queueId: string, text: string): PostfixEvent | null {
  const m = CLIENT_LINE.exec(text);
  if (!m) return null;
  return {
    kind: 'client',
    queueId,
    clientHost: m[1],
    clientIp: normaliseIp(m[2]) ?? m[2],
    saslMethod: m[3],
    saslUsername: m[4],
  };
}

/** `from=<S>, size=N, nrcpt=M (queue active)` (opened.c) and `from=<S>, status=expired, returned to sender`. */
function queueManager(queueId: string, text: string): PostfixEvent | null {
  if (text === 'removed') return { kind: 'removed', queueId };
  // The sender is what the client sent: it runs to the last `>` that Postfix's own text follows.
  const expired = /^from=<(.*)>, status=(?:force-)?expired, returned to sender$/s.exec(text);
  if (expired) return { kind: 'expired', queueId, from: expired[1] };
  const opened = /^from=<(.*)>, size=(\d+), nrcpt=(\d+)(?: \(.*\))?$/s.exec(text);
  if (!opened) return null;
  return { kind: 'from', queueId, from: opened[1], size: Number(opened[2]), nrcpt: Number(opened[3]) };
}

/**
 * `to=<R>[, orig_to=<O>], relay=…, [conn_use=N, ]delay=…, delays=…, dsn=…, status=S (reason)`
 * (log_adhoc.c), written by every delivery agent (smtp, lmtp, local, virtual, pipe, error, …).
 * The recipients are what the client sent and may hold `>` and `, `: they end where `relay=…,
 * delay=` begins.
 */
const DELIVERY_HEAD = /^to=<(.*?)>(?:, orig_to=<(.*?)>)?, (?=relay=[^\s,]*, (?:conn_use=\d+, )?delay=)/s;

function delivery(queueId: string, text: string): PostfixEvent | null {
  const head = DELIVERY_HEAD.exec(text);
  if (!head) return null;
  const rest = text.slice(head[0].length);
  const fields = attributes(rest);
  const statusWord = fields.get('status');
  const status = statusWord && (/^(sent|deferred|bounced|expired)\b/.exec(statusWord)?.[1] as DeliveryStatus);
  if (!status) return null;
  const open = rest.indexOf(' (', rest.indexOf('status='));
  const response = open >= 0 && rest.endsWith(')') ? rest.slice(open + 2, -1) : undefined;
  const remoteQueueId = response === undefined ? undefined : remoteQueueIdOf(response);
  const delay = Number(fields.get('delay'));
  // What the line does not say is undefined (one shape for every delivery line, no spreads).
  return {
    kind: 'delivery',
    queueId,
    to: head[1],
    origTo: head[2],
    relay: fields.get('relay'),
    delay: Number.isFinite(delay) ? delay : undefined,
    delays: fields.get('delays'),
    dsn: fields.get('dsn'),
    status,
    response,
    remoteQueueId: remoteQueueId || undefined,
  };
}

/**
 * `<action>: <stage> from host[ip]: [<code> ][<dsn> ]<reply>; from=<S>[ to=<R>][ proto=P][ helo=<H>]`
 * (smtpd_check.c `log_whatsup`, smtpd.c and cleanup_milter.c for `milter-reject`; cleanup drops
 * the reply's code). Postfix may append ` sasl_method=… sasl_username=…` for an authenticated
 * client; it is not read here (identity comes only from the client line). The reply runs to the
 * first `; from=<`; each value in angle brackets runs to the `>` followed by the next field Postfix
 * writes (`from=` to `> to=<`), whatever `>` or `, ` the client put inside it.
 */
const REJECT_HEAD =
  /^(reject|milter-reject): (\S+(?: content)?) from ([^\s[\]]+)\[([^\s[\]]+)\](?::\d+)?: (?:(\d{3}) )?(?:(\d\.\d{1,3}\.\d{1,3}) )?/;
const SASL_FIELDS = [' sasl_method=', ' sasl_username=', ' sasl_sender='];

function reject(text: string, actions: readonly string[]): (RejectFields & { code?: number }) | null {
  const head = REJECT_HEAD.exec(text);
  if (!head || !actions.includes(head[1])) return null;
  const reply = text.slice(head[0].length);
  const fromAt = reply.indexOf('; from=<');
  if (fromAt < 0) return null;
  let rest = reply.slice(fromAt + '; from=<'.length);
  const from = angleValue(rest, [' to=<', ' proto=', ' helo=<', ...SASL_FIELDS]);
  if (!from) return null;
  rest = from.rest;
  let to: string | undefined;
  if (rest.startsWith(' to=<')) {
    const value = angleValue(rest.slice(' to=<'.length), [' proto=', ' helo=<', ...SASL_FIELDS]);
    if (!value) return null;
    [to, rest] = [value.value, value.rest];
  }
  const proto = /^ proto=(\S+)/.exec(rest);
  if (proto) rest = rest.slice(proto[0].length);
  const helo = rest.startsWith(' helo=<') ? angleValue(rest.slice(' helo=<'.length), SASL_FIELDS) : null;
  return {
    stage: head[2],
    clientHost: head[3],
    clientIp: normaliseIp(head[4]) ?? head[4],
    code: head[5] === undefined ? undefined : Number(head[5]),
    dsn: head[6],
    response: reply.slice(0, fromAt),
    from: from.value,
    to,
    proto: proto?.[1],
    helo: helo?.value,
  };
}

/**
 * A value that Postfix wrote in angle brackets, `text` starting after its `<`: it ends at the `>`
 * followed by the first of `next` (tried in order) found, else at a `>` ending the text.
 */
function angleValue(text: string, next: readonly string[]): { value: string; rest: string } | null {
  for (const field of next) {
    const end = text.indexOf(`>${field}`);
    if (end !== -1) return { value: text.slice(0, end), rest: text.slice(end + 1) };
  }
  return text.endsWith('>') ? { value: text.slice(0, -1), rest: '' } : null;
}

/**
 * The `name=value` pairs Postfix writes after a delivery's recipients, separated by `, `, up to
 * `status=`; a comment in parentheses ends a value (`status=sent (250 Ok)`).
 */
function attributes(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const pair of text.split(', ')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq);
    fields.set(name, pair.slice(eq + 1).replace(/ \(.*$/s, ''));
    if (name === 'status') break;
  }
  return fields;
}

/** `queued as F12DF84004`, `Ok: queued as <id>`, `Ok id=1a2b-3c`, `250 Ok 0100018c…` are what next hops say. */
export function remoteQueueIdOf(response: string): string | undefined {
  const m = /queued as <?([\w.@-]+?)>?(?:\)|$|\s)/i.exec(response) ?? /\bid=<?([\w.@-]+)>?/i.exec(response);
  return m?.[1];
}

const stripAngles = (value: string): string => value.replace(/^<(.*)>$/s, '$1');
const fraction = (digits: string | undefined): number =>
  digits ? Math.floor(Number(`0.${digits}`) * 1000) : 0;

/** `Nov 21 18:58:35`: in the year nearest to `now`, and null unless that day exists in that year. */
function bsdTime(m: RegExpExecArray, opts: { now: Date; timeZone: string }): Date | null {
  const month = MONTHS.indexOf(m[1]);
  const [day, h, mi, s] = [m[2], m[3], m[4], m[5]].map(Number);
  if (month < 0 || !isClockTime(h, mi, s)) return null;
  const nearest = nearestYear(opts.now, opts.timeZone, month, day, h, mi, s, fraction(m[6]));
  return day >= 1 && day <= daysInMonth(nearest.year, month) ? nearest.at : null;
}

/** RFC 3339 (`2026-11-21T18:58:35.123+07:00`), null unless the date and time exist. */
function isoTime(m: RegExpExecArray, timeZone: string): Date | null {
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  const zone = m[8];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month - 1)) return null;
  if (!isClockTime(hour, minute, second)) return null;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, fraction(m[7]));
  if (!zone) return new Date(wall - tzOffsetMs(timeZone, wall));
  const offset = zoneOffsetMs(zone);
  return offset === null ? null : new Date(wall - offset);
}

const isClockTime = (h: number, mi: number, s: number): boolean => h <= 23 && mi <= 59 && s <= 59;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 1 && leap ? 29 : DAYS_IN_MONTH[month];
}

function zoneOffsetMs(zone: string): number | null {
  if (zone === 'Z') return 0;
  const [, sign, hours, minutes] = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  if (Number(hours) > 23 || Number(minutes) > 59) return null;
  return (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000;
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** The offset of `timeZone` from UTC at about the instant `utcWallMs` (read as if it were UTC). */
function tzOffsetMs(timeZone: string, utcWallMs: number): number {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneFormats.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(utcWallMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return asUtc - Math.floor(utcWallMs / 1000) * 1000;
}

/**
 * A year-less syslog time: of the years around `now`'s, the one that puts it nearest to `now`
 * (a day that a year lacks, such as Feb 29, is placed by the day after it, then checked).
 */
function nearestYear(
  now: Date,
  timeZone: string,
  month: number,
  day: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): { year: number; at: Date } {
  const year = now.getUTCFullYear();
  let best: { year: number; at: Date } | undefined;
  for (const y of [year - 1, year, year + 1]) {
    const wall = Date.UTC(y, month, day, h, mi, s, ms);
    const at = new Date(wall - tzOffsetMs(timeZone, wall));
    if (!best || Math.abs(at.getTime() - now.getTime()) < Math.abs(best.at.getTime() - now.getTime()))
      best = { year: y, at };
  }
  return best!;
}
