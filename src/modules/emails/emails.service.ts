import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { EntityManager, Repository } from 'typeorm';
import {
  BadRequestError,
  ConflictError,
  DomainError,
  ForbiddenError,
} from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { toDateWindow } from '../../common/validation/date-filter';
import { AppConfig } from '../../config/app-config';
import { packed } from '../../database/chunks';
import { DatabaseRuntime } from '../../database/database-runtime';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import type { ApiKey } from '../api-keys/entities/api-key.entity';
import { senderDomainName, senderDomainOf } from '../attribution/sender-identity';
import { NewWebhookEvent, WebhookOutbox } from '../webhooks/webhook-outbox';
import type { Company } from '../companies/entities/company.entity';
import type { RelayStatus } from '../companies/relay-status';
import { RelayDecisionService } from '../internal/relay-decision.service';
import { LogIndex } from '../log-index/log-index';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_RAW_BYTES,
  MAX_RECIPIENTS,
  MAX_SCHEDULE_AHEAD_MS,
  ListEmailsQueryDto,
  SendEmailDto,
  SendRawEmailDto,
} from './dto/email-requests.dto';
import { EmailDetailDto, EmailDto, SentEmailDto } from './dto/email-responses.dto';
import {
  base64Bytes,
  EmailContent,
  envelopeAddress,
  headerValue,
  parseAddresses,
  withMessageId,
} from './email-content';
import { bareMessageId } from './email-links';
import { EmailWork } from './email-work';
import { Email, RejectedRecipient } from './entities/email.entity';

export const EMAIL_NOT_FOUND = 'Email not found';
export const NEEDS_RELAY = 'Sending by HTTP needs a relay (RELAY_SUBMIT_URL)';
export const SENDER_NOT_VERIFIED = 'Sender domain not verified';
export const ALL_SUPPRESSED = 'Every recipient is on the suppression list';

/** Who sends: the company, and the API key when a key calls. */
export interface Sender {
  company: Company;
  apiKey: ApiKey | null;
}

/** A message judged and ready to store. */
interface Judged {
  row: Partial<Email>;
  content: EmailContent;
  answer: SentEmailDto;
}

/**
 * Characters of content (JSON, attachments in base64) one shared INSERT holds at most: requests
 * with large messages are stored in statements of their own, as they were before sharing.
 */
const SHARED_INSERT_CHARS = 1_000_000;

/** The refusal of each relay state that is not `active` (platform.md "Sending by HTTP"). */
const REFUSED: Record<Exclude<RelayStatus, 'active' | 'quota_exceeded'>, string> = {
  suspended: 'Company suspended',
  no_package: 'No active package',
  expired: 'Subscription period expired',
};

/**
 * Sending by HTTP (platform.md "Sending by HTTP"): a message is judged with the relay decision's
 * own rule before anything is stored, then kept (202) until the submission worker hands it to the
 * relay, where it goes the way every SMTP message goes.
 */
@Injectable()
export class EmailsService {
  /**
   * Stores one request's messages that need no transaction (no Idempotency-Key, nothing refused):
   * on PostgreSQL the requests stored at the same moment share one INSERT, so that under load a
   * message costs the service and the database a share of a statement and of a commit, not one
   * each. A request's messages stay in one statement (a /batch is stored whole or not at all).
   */
  private readonly insertAlone: (rows: Array<Partial<Email>>) => Promise<void>;

  constructor(
    @InjectRepository(Email) private readonly emails: Repository<Email>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly relayDecision: RelayDecisionService,
    private readonly config: AppConfig,
    private readonly logIndex: LogIndex,
    private readonly work: EmailWork,
    private readonly webhooks: WebhookOutbox,
    runtime: DatabaseRuntime,
  ) {
    this.insertAlone = runtime.batchedQuery<Array<Partial<Email>>, void>({
      many: (calls) => this.insertTogether(calls),
      each: (rows) => this.insert(rows),
    });
  }

  private async insert(rows: Array<Partial<Email>>): Promise<void> {
    await this.dialect.insertMany(this.emails.manager, Email, rows, 'ignore');
  }

  /**
   * The requests' messages in shared statements of at most SHARED_INSERT_CHARS of content (a
   * request with more goes alone); when one fails, each of its requests alone, so that one cannot
   * fail the others.
   */
  private async insertTogether(calls: Array<Array<Partial<Email>>>): Promise<Array<void | Error>> {
    const groups = packed(
      calls.map((rows) => [rows]),
      SHARED_INSERT_CHARS,
      (rows) => rows.reduce((sum, row) => sum + (row.content?.length ?? 0), 0),
    );
    return (await Promise.all(groups.map((group) => this.insertGroup(group)))).flat();
  }

  private async insertGroup(calls: Array<Array<Partial<Email>>>): Promise<Array<void | Error>> {
    const alone = (rows: Array<Partial<Email>>) =>
      this.insert(rows).then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
    if (calls.length === 1) return [await alone(calls[0])];
    try {
      await this.insert(calls.flat());
      return calls.map(() => undefined);
    } catch {
      return Promise.all(calls.map(alone));
    }
  }

  /** 503 when no relay is configured: the routes cannot send anything. */
  requireRelay(): void {
    if (!this.config.env.RELAY_SUBMIT_URL) throw new DomainError(HttpStatus.SERVICE_UNAVAILABLE, NEEDS_RELAY);
  }

  /** Judges one message to compose; throws the refusal. */
  async judgeMessage(sender: Sender, dto: SendEmailDto, now = new Date()): Promise<Judged> {
    if (dto.text === undefined && dto.html === undefined)
      throw new BadRequestError('text or html is required');
    const [from] = parseAddresses('from', [dto.from]);
    const to = parseAddresses('to', dto.to);
    const cc = parseAddresses('cc', dto.cc ?? []);
    const bcc = parseAddresses('bcc', dto.bcc ?? []);
    if (dto.replyTo !== undefined) parseAddresses('replyTo', [dto.replyTo]);
    if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
      throw new BadRequestError(`to, cc and bcc hold at most ${MAX_RECIPIENTS} recipients together`);
    }
    const attachmentBytes = (dto.attachments ?? []).reduce((sum, a) => sum + base64Bytes(a.content), 0);
    if (attachmentBytes > MAX_ATTACHMENT_BYTES)
      throw new BadRequestError('attachments hold at most 10 MB in all');
    const scheduledAt = this.scheduledAt(dto.scheduledAt, now);
    const recipients = [...to, ...cc, ...bcc].map((r) => r.address);
    const { domain, accepted, rejected } = await this.judge(sender, from.address, recipients);
    const id = randomUUID();
    const messageId = `<${id}@${domain}>`;
    return this.judged(
      sender,
      {
        uuid: id,
        kind: 'compose',
        messageId,
        envelopeFrom: from.address,
        from: from.text,
        to: to.map((r) => r.text),
        cc: cc.map((r) => r.text),
        bcc: bcc.map((r) => r.text),
        replyTo: dto.replyTo ?? null,
        subject: dto.subject,
        tags: dto.tags ?? {},
        metadata: dto.metadata ?? {},
      },
      {
        kind: 'compose',
        text: dto.text,
        html: dto.html,
        headers: dto.headers,
        attachments: dto.attachments,
      },
      { accepted, rejected, scheduledAt, now },
    );
  }

  /** Judges a raw message; throws the refusal. */
  async judgeRaw(sender: Sender, dto: SendRawEmailDto, now = new Date()): Promise<Judged> {
    const envelopeFrom = envelopeAddress('from', dto.from);
    const to = dto.to.map((r) => envelopeAddress('to', r));
    if (base64Bytes(dto.raw) > MAX_RAW_BYTES) throw new BadRequestError('raw holds at most 25 MB decoded');
    const { domain, accepted, rejected } = await this.judge(sender, envelopeFrom, to);
    const id = randomUUID();
    const given = Buffer.from(dto.raw, 'base64');
    const message = withMessageId(given, `<${id}@${domain}>`);
    const messageId = headerValue(message, 'Message-ID')!.slice(0, 500);
    return this.judged(
      sender,
      {
        uuid: id,
        kind: 'raw',
        messageId,
        envelopeFrom,
        from: (headerValue(message, 'From') ?? envelopeFrom).slice(0, 998),
        to,
        cc: [],
        bcc: [],
        replyTo: null,
        subject: headerValue(message, 'Subject')?.slice(0, 998) ?? null,
        tags: dto.tags ?? {},
        metadata: dto.metadata ?? {},
      },
      { kind: 'raw', raw: message === given ? dto.raw : message.toString('base64') },
      { accepted, rejected, scheduledAt: null, now },
    );
  }

  /**
   * Stores judged messages with their `email.rejected` events and, in the same transaction,
   * whatever `also` keeps (the idempotent answer); messages with neither are one INSERT, which
   * needs no transaction of its own (insertAlone).
   */
  async store(judged: readonly Judged[], also: ((em: EntityManager) => Promise<void>) | null): Promise<void> {
    const rows = judged.map((j) => ({ ...j.row, content: JSON.stringify(j.content) }));
    const events = judged.flatMap((j) => this.rejectedEvents(j));
    if (also === null && events.length === 0) {
      if (rows.length) await this.insertAlone(rows);
    } else {
      await this.transactions.run(async (em) => {
        if (rows.length) await this.dialect.insertMany(em, Email, rows, 'ignore');
        await this.webhooks.emit(em, events);
        await also?.(em);
      });
    }
    if (rows.length) this.work.stored(rows.length);
  }

  /** An `email.rejected` per recipient refused before the message was stored (platform.md "Event types"). */
  private rejectedEvents({ row }: Judged): NewWebhookEvent[] {
    const domain = senderDomainName(row.envelopeFrom);
    return (row.rejected ?? []).map(({ email, reason }) => ({
      companyId: row.companyId!,
      type: 'email.rejected' as const,
      domain,
      fact: `${row.uuid}\nemail.rejected\n${email.toLowerCase()}`,
      data: {
        emailId: row.uuid,
        messageId: row.messageId,
        domain,
        from: row.envelopeFrom,
        to: email,
        status: 'rejected',
        at: (row.createdAt ?? new Date()).toISOString(),
        reason,
        tags: row.tags,
        metadata: row.metadata,
      },
    }));
  }

  async list(company: Company, q: ListEmailsQueryDto): Promise<Page<EmailDto>> {
    const window = toDateWindow(q.from, q.to);
    const qb = this.emails
      .createQueryBuilder('email')
      .where('email.companyId = :companyId', { companyId: company.id });
    if (q.status) qb.andWhere('email.status = :status', { status: q.status });
    if (window.from) qb.andWhere('email.createdAt >= :from', { from: window.from });
    if (window.toExclusive) qb.andWhere('email.createdAt < :to', { to: window.toExclusive });
    if (q.tag) {
      const [name, value] = q.tag.split(':');
      // Tags are stored as JSON text; names and values are [A-Za-z0-9_-], so the pair is one exact
      // substring. Not LIKE: `_` is its wildcard, and SQLite's LIKE ignores case; REPLACE is exact on both.
      qb.andWhere("REPLACE(email.tags, :tag, '') <> email.tags", {
        tag: JSON.stringify({ [name]: value }).slice(1, -1),
      });
    }
    const [items, total] = await qb
      .orderBy('email.createdAt', 'DESC')
      .addOrderBy('email.id', 'DESC')
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      items.map((e) => EmailDto.from(e)),
      total,
      q.page,
      q.limit,
    );
  }

  /** The message with its recipients' state: from the clean records once the relay took it. */
  async view(email: Email): Promise<EmailDetailDto> {
    const records =
      email.accepted.length && email.status === 'submitted'
        ? await this.recordsOf(email)
        : new Map<string, Awaited<ReturnType<LogIndex['getMany']>>[number]>();
    const recipients = [
      ...email.accepted.map((address) => {
        const record = records.get(address.toLowerCase());
        return record
          ? {
              email: address,
              status: record.status,
              dsn: record.dsn,
              response: record.response,
              lastEventAt: record.lastEventAt,
            }
          : {
              email: address,
              status:
                email.status === 'failed' ? 'failed' : email.status === 'canceled' ? 'canceled' : 'queued',
              dsn: null,
              response: email.status === 'failed' ? email.lastError : null,
              lastEventAt: email.submittedAt ?? email.updatedAt,
            };
      }),
      ...email.rejected.map((r) => ({
        email: r.email,
        status: 'rejected',
        dsn: null,
        response: r.reason,
        lastEventAt: email.createdAt,
      })),
    ];
    return { ...EmailDto.from(email), recipients };
  }

  /** Takes a scheduled message back; 409 once it left the queue. */
  async cancel(email: Email): Promise<void> {
    const canceled = await this.emails.update(
      { id: email.id, status: 'scheduled' },
      { status: 'canceled', nextAttemptAt: null, content: null },
    );
    if (!canceled.affected)
      throw new ConflictError('Only a scheduled message can be canceled, and this one left the queue');
  }

  /**
   * The relay decision's own rule (integrations.md "Relay decision") for this company as its relay
   * username, sender and recipients: the company's state, the quota, the sender's domain, the
   * suppression list; and a key's own domains.
   */
  private async judge(
    sender: Sender,
    envelopeFrom: string,
    recipients: string[],
  ): Promise<{ domain: string; accepted: string[]; rejected: RejectedRecipient[] }> {
    const unique = [...new Map(recipients.map((r) => [r.toLowerCase(), r])).values()];
    const domain = senderDomainOf(envelopeFrom);
    if (domain.kind !== 'domain') throw new DomainError(HttpStatus.UNPROCESSABLE_ENTITY, SENDER_NOT_VERIFIED);
    const key = sender.apiKey;
    if (key && key.domains.length && !key.domains.includes(domain.name)) {
      throw new ForbiddenError(`API key may not send from ${domain.name}`);
    }
    const decision = await this.relayDecision.decide({
      relayUsername: sender.company.relayUsername,
      sender: envelopeFrom,
      recipients: unique,
    });
    const status = decision.status ?? 'suspended';
    if (status === 'quota_exceeded') {
      const periodEnd = sender.company.periodEnd?.getTime() ?? Date.now();
      const seconds = Math.max(1, Math.ceil((periodEnd - Date.now()) / 1000));
      throw new DomainError(HttpStatus.TOO_MANY_REQUESTS, 'Quota exhausted', {
        'retry-after': String(seconds),
      });
    }
    if (status !== 'active') throw new ForbiddenError(REFUSED[status]);
    if (decision.senderDomainVerified !== true) {
      throw new DomainError(HttpStatus.UNPROCESSABLE_ENTITY, SENDER_NOT_VERIFIED);
    }
    const suppressed = new Map(decision.rejectedRecipients.map((r) => [r.email, r.reason]));
    const rejected = unique
      .filter((r) => suppressed.has(r.trim().toLowerCase()))
      .map((email) => ({ email, reason: `suppressed (${suppressed.get(email.trim().toLowerCase())})` }));
    const accepted = unique.filter((r) => !suppressed.has(r.trim().toLowerCase()));
    if (!accepted.length) throw new DomainError(HttpStatus.UNPROCESSABLE_ENTITY, ALL_SUPPRESSED);
    return { domain: domain.name, accepted, rejected };
  }

  private judged(
    sender: Sender,
    row: Partial<Email>,
    content: EmailContent,
    o: { accepted: string[]; rejected: RejectedRecipient[]; scheduledAt: Date | null; now: Date },
  ): Judged {
    const status = o.scheduledAt ? 'scheduled' : 'queued';
    return {
      row: {
        ...row,
        companyId: sender.company.id,
        apiKeyId: sender.apiKey?.id ?? null,
        status,
        accepted: o.accepted,
        rejected: o.rejected,
        pending: [],
        queueIds: [],
        scheduledAt: o.scheduledAt,
        nextAttemptAt: o.scheduledAt ?? o.now,
        attempts: 0,
        createdAt: o.now,
        updatedAt: o.now,
      },
      content,
      answer: {
        id: row.uuid!,
        messageId: row.messageId!,
        status,
        accepted: o.accepted,
        rejected: o.rejected,
      },
    };
  }

  /** `scheduledAt` as a date: null for now or the past, 400 beyond 7 days. */
  private scheduledAt(given: string | undefined, now: Date): Date | null {
    if (given === undefined) return null;
    const at = new Date(given);
    if (at.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) {
      throw new BadRequestError('scheduledAt must be at most 7 days ahead');
    }
    return at.getTime() > now.getTime() ? at : null;
  }

  /** The message's clean records by recipient: its Message-ID, its company, and its queue when known. */
  private async recordsOf(email: Email) {
    const located = await this.logIndex.locate(
      // Records keep recipients lower-cased and the Message-ID without its angle brackets.
      email.accepted.map((recipient) => ({
        recipient: recipient.toLowerCase(),
        messageId: bareMessageId(email.messageId),
      })),
    );
    // A raw message sent twice keeps its Message-ID: the relay's queue ids tell the two apart.
    const ids = located
      .filter(
        (l) =>
          l.companyId === email.companyId &&
          (!email.queueIds.length || (l.queueId !== null && email.queueIds.includes(l.queueId))),
      )
      .map((l) => l.id);
    const records = ids.length ? await this.logIndex.getMany(ids) : [];
    return new Map(records.map((r) => [r.to.toLowerCase(), r]));
  }
}
