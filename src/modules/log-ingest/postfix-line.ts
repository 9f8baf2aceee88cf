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
  | {
      kind: 'noqueue-reject';
      stage: string;
      clientHost: string;
      clientIp: string;
      code: number;
      dsn?: string;
      response: string;
      from: string;
      to?: string;
      proto?: string;
      helo?: string;
    };

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `Nov 21 18:58:35` (day may be space-padded), optional fraction. */
const BSD_TIME = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))? /;
/** RFC 3339 / ISO 8601 with a zone, or without one (read in the given zone). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})? /;
/** `host program[pid]: message` (pid optional). */
const REST = /^(\S+) ([\w./-]+?)(?:\[(\d+)\])?: (.*)$/s;
/** Postfix queue ids: short hex (`AA10A2839B`) or the long form (`4Dq3m53kSRz1xJ9`). */
const QUEUE_ID = /^([0-9A-Za-z]{5,20}): (.*)$/s;

/**
 * Splits a syslog line. A time without a year takes the year that puts it nearest to `now`; a
 * time without a zone is read in `timeZone` (an IANA name). A line without a time still parses
 * when it starts with `host program[pid]:`; a bare message is not a syslog line (null).
 */
export function parseSyslogLine(line: string, opts: { now: Date; timeZone: string }): SyslogLine | null {
  let rest = line.replace(/\r?\n$/, '');
  let at: Date | undefined;
  const bsd = BSD_TIME.exec(rest);
  const iso = bsd ? null : ISO_TIME.exec(rest);
  if (bsd) {
    const month = MONTHS.indexOf(bsd[1]);
    if (month < 0) return null;
    at = nearestYear(opts.now, opts.timeZone, month, +bsd[2], +bsd[3], +bsd[4], +bsd[5], fraction(bsd[6]));
    rest = rest.slice(bsd[0].length);
  } else if (iso) {
    const [, y, mo, d, h, mi, s, frac, zone] = iso;
    const wall = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, fraction(frac));
    at = new Date(zone ? wall - zoneOffsetMs(zone) : wall - tzOffsetMs(opts.timeZone, wall));
    rest = rest.slice(iso[0].length);
  }
  if (at && Number.isNaN(at.getTime())) return null;
  const m = REST.exec(rest);
  if (!m) return null;
  return { ...(at && { at }), host: m[1], program: m[2], ...(m[3] && { pid: Number(m[3]) }), message: m[4] };
}

/** The event of a Postfix program's message, or null when the program or the form is not one we use. */
export function parsePostfixMessage(program: string, message: string): PostfixEvent | null {
  if (!/^postfix[\w-]*\//.test(program)) return null;
  const daemon = program.slice(program.lastIndexOf('/') + 1);
  if (message.startsWith('NOQUEUE: reject: ')) return daemon === 'smtpd' ? noqueueReject(message) : null;
  const q = QUEUE_ID.exec(message);
  if (!q) return null;
  const [, queueId, text] = q;
  const fields = attributes(text);
  switch (daemon) {
    case 'smtpd': {
      const client = fields.get('client');
      const parsed = client && hostAndIp(client);
      if (!parsed) return null;
      return {
        kind: 'client',
        queueId,
        ...parsed,
        ...(fields.has('sasl_method') && { saslMethod: fields.get('sasl_method') }),
        ...(fields.has('sasl_username') && { saslUsername: fields.get('sasl_username') }),
      };
    }
    case 'cleanup': {
      const id = fields.get('message-id');
      return id === undefined ? null : { kind: 'message-id', queueId, messageId: stripAngles(id) };
    }
    case 'qmgr': {
      if (text === 'removed') return { kind: 'removed', queueId };
      const from = fields.get('from');
      if (from === undefined) return null;
      if (fields.get('status') === 'expired') return { kind: 'expired', queueId, from: stripAngles(from) };
      return {
        kind: 'from',
        queueId,
        from: stripAngles(from),
        ...(isCount(fields.get('size')) && { size: Number(fields.get('size')) }),
        ...(isCount(fields.get('nrcpt')) && { nrcpt: Number(fields.get('nrcpt')) }),
      };
    }
    default:
      return delivery(queueId, fields, text);
  }
}

/** `to=` lines of the delivery agents (smtp, lmtp, local, virtual, pipe, error, …). */
function delivery(queueId: string, fields: Map<string, string>, text: string): PostfixEvent | null {
  const to = fields.get('to');
  const statusWord = fields.get('status');
  if (to === undefined || statusWord === undefined) return null;
  const status = /^(sent|deferred|bounced|expired)\b/.exec(statusWord)?.[1] as DeliveryStatus | undefined;
  if (!status) return null;
  const open = text.indexOf(' (', text.indexOf('status='));
  const response = open >= 0 && text.endsWith(')') ? text.slice(open + 2, -1) : undefined;
  const delay = Number(fields.get('delay'));
  return {
    kind: 'delivery',
    queueId,
    to: stripAngles(to),
    ...(fields.has('orig_to') && { origTo: stripAngles(fields.get('orig_to')!) }),
    ...(fields.has('relay') && { relay: fields.get('relay') }),
    ...(fields.has('delay') && Number.isFinite(delay) && { delay }),
    ...(fields.has('delays') && { delays: fields.get('delays') }),
    ...(fields.has('dsn') && { dsn: fields.get('dsn') }),
    status,
    ...(response !== undefined && { response }),
    ...(response !== undefined && remoteQueueIdOf(response) && { remoteQueueId: remoteQueueIdOf(response) }),
  };
}

/** `NOQUEUE: reject: RCPT from h[1.2.3.4]: 554 5.7.1 <x@y.z>: Relay access denied; from=<a@b> to=<x@y.z> proto=ESMTP helo=<h>` */
function noqueueReject(message: string): PostfixEvent | null {
  const m =
    /^NOQUEUE: reject: (\S+) from ([^\s[]+)\[([^\]]+)\]: (\d{3}) (?:(\d\.\d{1,3}\.\d{1,3}) )?(.*?); (from=.*)$/s.exec(
      message,
    );
  if (!m) return null;
  const fields = attributes(m[7].replace(/ /g, ', '));
  const from = fields.get('from');
  if (from === undefined) return null;
  return {
    kind: 'noqueue-reject',
    stage: m[1],
    clientHost: m[2],
    clientIp: m[3],
    code: Number(m[4]),
    ...(m[5] && { dsn: m[5] }),
    response: m[6],
    from: stripAngles(from),
    ...(fields.has('to') && { to: stripAngles(fields.get('to')!) }),
    ...(fields.has('proto') && { proto: fields.get('proto') }),
    ...(fields.has('helo') && { helo: stripAngles(fields.get('helo')!) }),
  };
}

/**
 * `name=value` pairs separated by `, `. A value in angle brackets runs to its closing `>` (an
 * address may hold `,` or spaces when quoted); the text in parentheses after `status=` is not an
 * attribute.
 */
function attributes(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) break;
    const name = text.slice(i, eq).trim();
    let end: number;
    if (text[eq + 1] === '<') {
      const close = text.indexOf('>', eq + 1);
      end = close < 0 ? text.length : close + 1;
    } else {
      const comma = text.indexOf(', ', eq + 1);
      end = comma < 0 ? text.length : comma;
    }
    let value = text.slice(eq + 1, end);
    // A comment in parentheses ends the value: `nrcpt=2 (queue active)`, `status=sent (250 Ok)`.
    if (!value.startsWith('<')) value = value.replace(/ \(.*$/s, '');
    if (/^[\w-]+$/.test(name)) fields.set(name, value);
    if (name === 'status') break;
    const next = text.indexOf(', ', end);
    if (next < 0) break;
    i = next + 2;
  }
  return fields;
}

function hostAndIp(value: string): { clientHost: string; clientIp: string } | null {
  const m = /^([^\s[]+)\[([^\]]+)\]/.exec(value);
  return m ? { clientHost: m[1], clientIp: m[2] } : null;
}

/** `queued as F12DF84004`, `Ok: queued as <id>`, `Ok id=1a2b-3c`, `250 Ok 0100018c…` are what next hops say. */
export function remoteQueueIdOf(response: string): string | undefined {
  const m = /queued as <?([\w.@-]+?)>?(?:\)|$|\s)/i.exec(response) ?? /\bid=<?([\w.@-]+)>?/i.exec(response);
  return m?.[1];
}

const stripAngles = (value: string): string => value.replace(/^<(.*)>$/s, '$1');
const isCount = (value: string | undefined): boolean => value !== undefined && /^\d+$/.test(value);
const fraction = (digits: string | undefined): number =>
  digits ? Math.floor(Number(`0.${digits}`) * 1000) : 0;

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
}

/** The offset of `timeZone` from UTC at about the instant `utcWallMs` (read as if it were UTC). */
function tzOffsetMs(timeZone: string, utcWallMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(utcWallMs));
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

/** A year-less syslog time: of the years around `now`'s, the one that puts it nearest to `now`. */
function nearestYear(
  now: Date,
  timeZone: string,
  month: number,
  day: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): Date {
  const year = now.getUTCFullYear();
  let best: Date | undefined;
  for (const y of [year - 1, year, year + 1]) {
    const wall = Date.UTC(y, month, day, h, mi, s, ms);
    const at = new Date(wall - tzOffsetMs(timeZone, wall));
    if (!best || Math.abs(at.getTime() - now.getTime()) < Math.abs(best.getTime() - now.getTime())) best = at;
  }
  return best!;
}
