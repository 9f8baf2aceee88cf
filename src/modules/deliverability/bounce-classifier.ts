// Why a failed delivery failed (deliverability.md, "Bounce classes"): the first rule of
// BOUNCE_RULES that matches the record's enhanced status code, reply class, reply text and next
// hop; a reply no rule matches is `other`, hard or soft by its class. Runs for every failed record
// of a log batch, so everything it can prepare is prepared once, at load.
import { BOUNCE_RULES, type BounceRule } from './bounce-rules';
import { relayHost } from './mailbox-providers';

export const BOUNCE_CATEGORIES = [
  'unknown-recipient',
  'bad-domain',
  'mailbox-disabled',
  'mailbox-full',
  'message-too-large',
  'authentication',
  'reputation',
  'content',
  'rate-limited',
  'infrastructure',
  'policy',
  'other',
] as const;
export type BounceCategory = (typeof BOUNCE_CATEGORIES)[number];

/** `hard`: the recipient is the problem; `soft`: temporary; `block`: the sender is the problem. */
export const BOUNCE_TYPES = ['hard', 'soft', 'block'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

export interface Bounce {
  type: BounceType;
  category: BounceCategory;
  rule: string;
}

export interface BounceInput {
  /** Postfix's `dsn=` (`5.1.1`), or null when the failure came without one. */
  dsn: string | null;
  /** Postfix's parenthesised text verbatim, or a provider event's bounce reason. */
  response: string | null;
  /** Postfix's `relay=` (`mx.example.net[192.0.2.7]:25`, `none`), or null. */
  relay: string | null;
}

type ReplyClass = 4 | 5;

/** What the rules look at, read once per record. */
interface Reply {
  code: string | null;
  replyClass: ReplyClass | null;
  /** The reply with Postfix's wrapping and multi-line codes taken out, so phrases read whole. */
  text: string;
  host: string | null;
}

interface CompiledRule {
  rule: BounceRule;
  exactCodes: ReadonlySet<string> | null;
  codePrefixes: readonly string[];
}

/** Postfix keeps a reply line to a few hundred bytes; this only bounds the work on a corrupt record. */
const MAX_TEXT = 4096;
const DSN = /^[245]\.\d{1,3}\.\d{1,3}$/;
const POSTFIX_HOST_SAID = /\bhost \S+ (?:said|refused to talk to me): /;
const POSTFIX_IN_REPLY_TO = /\s*\(in reply to [^)]*\)\s*$/;
// A code stands alone: not inside an IP address, a port (`]:587`), an id or a date.
const BASIC_CODE = /(?<![\w.:[-])([245])\d\d(?=[\s-]|$)/;
const ENHANCED_AFTER_BASIC = /(?<![\w.:[-])[245]\d\d[\s-]#?([245]\.\d{1,3}\.\d{1,3})(?!\.?\d)/;
const LEADING_ENHANCED = /^\s*#?([245]\.\d{1,3}\.\d{1,3})(?!\.?\d)/;
// `550-5.1.1 ` and `550 5.1.1 ` (and bare `550-`) starting each line Postfix joined into one.
const LINE_CODES =
  /(?<![\w.:[-])[245]\d\d(?:-#?(?:[245]\.\d{1,3}\.\d{1,3}(?!\.?\d))?|\s+#?[245]\.\d{1,3}\.\d{1,3}(?!\.?\d))/g;
const SPACES = /\s+/g;

const COMPILED_RULES: readonly CompiledRule[] = BOUNCE_RULES.map(compileRule);

export function classifyBounce(input: BounceInput): Bounce {
  const reply = readReply(input);
  for (const compiled of COMPILED_RULES) {
    if (matches(compiled, reply)) {
      const { type, category, name } = compiled.rule;
      return { type, category, rule: name };
    }
  }
  return reply.replyClass === 5
    ? { type: 'hard', category: 'other', rule: 'other-hard' }
    : { type: 'soft', category: 'other', rule: 'other-soft' };
}

function readReply(input: BounceInput | null | undefined): Reply {
  const raw = typeof input?.response === 'string' ? input.response.slice(0, MAX_TEXT) : '';
  const unwrapped = raw.replace(POSTFIX_HOST_SAID, '').replace(POSTFIX_IN_REPLY_TO, '');
  const dsn = typeof input?.dsn === 'string' && DSN.test(input.dsn.trim()) ? input.dsn.trim() : null;
  const textCode = (ENHANCED_AFTER_BASIC.exec(unwrapped) ?? LEADING_ENHANCED.exec(unwrapped))?.[1] ?? null;
  const code = dsn ?? textCode;
  return {
    code,
    replyClass: classOf(dsn ?? BASIC_CODE.exec(unwrapped)?.[1] ?? textCode),
    text: unwrapped.replace(LINE_CODES, ' ').replace(SPACES, ' ').trim(),
    host: relayHost(typeof input?.relay === 'string' ? input.relay : null),
  };
}

function classOf(code: string | null): ReplyClass | null {
  if (code?.startsWith('4')) return 4;
  if (code?.startsWith('5')) return 5;
  return null;
}

function compileRule(rule: BounceRule): CompiledRule {
  const codes = rule.codes ?? [];
  const exact = codes.filter((code) => !code.endsWith('.'));
  return {
    rule,
    exactCodes: rule.codes ? new Set(exact) : null,
    codePrefixes: codes.filter((code) => code.endsWith('.')),
  };
}

function matches({ rule, exactCodes, codePrefixes }: CompiledRule, reply: Reply): boolean {
  // A temporary reply is never the recipient's or the sender's final verdict.
  if (reply.replyClass === 4 && rule.type !== 'soft') return false;
  if (rule.replyClass !== undefined && rule.replyClass !== reply.replyClass) return false;
  if (exactCodes && !codeMatches(reply.code, exactCodes, codePrefixes)) return false;
  if (rule.relay && (reply.host === null || !rule.relay.test(reply.host))) return false;
  return !rule.text || rule.text.test(reply.text);
}

function codeMatches(code: string | null, exact: ReadonlySet<string>, prefixes: readonly string[]): boolean {
  if (code === null) return false;
  if (exact.has(code)) return true;
  for (const prefix of prefixes) if (code.startsWith(prefix)) return true;
  return false;
}
