import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { EntityManager, In } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { senderDomainName } from '../attribution/sender-identity';
import { SubmissionTokens } from '../relay-submission/submission-tokens';
import { NewWebhookEvent, WebhookOutbox } from '../webhooks/webhook-outbox';
import { EmailContent } from './email-content';
import { EmailWork } from './email-work';
import { Email, RejectedRecipient } from './entities/email.entity';
import {
  RecipientRefusal,
  RelayRefusedError,
  RelaySubmitter,
  RelayUnavailableError,
  SubmissionMessage,
  SubmissionResult,
} from './relay-submitter';

/**
 * The least time between two claims: each is a statement and a read of what it took, so while
 * messages keep coming (each one wakes the worker) they are taken by the batch, not one by one.
 */
const CLAIM_INTERVAL_MS = 50;
/** How long a message the relay took waits to be recorded with the others, and how many at most. */
const RECORD_INTERVAL_MS = 10;
const RECORD_BATCH = 200;
/** How long a claimed message is the claimer's: past it (the process died) another takes it. */
const CLAIM_MS = 5 * 60_000;
const POLL_MS = 1_000;
/** platform.md: the relay down or answering 4xx → tried again for 24 hours, then `failed`. */
export const GIVE_UP_AFTER_MS = 86_400_000;
const FIRST_RETRY_MS = 60_000;
const LONGEST_RETRY_MS = 30 * 60_000;

/** 1 minute, doubling, at most 30 minutes apart (platform.md "Sending by HTTP"). */
export const retryDelayMs = (attempts: number): number =>
  Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));

/** A message the relay took, waiting to be recorded; its submission ends once it is. */
interface HandedOver {
  email: Email;
  result: SubmissionResult;
  at: Date;
  recorded: () => void;
  failed: (e: unknown) => void;
}

/** A claimed message with what its submission needs. */
interface Claimed {
  email: Email & { content: string | null };
  relayUsername: string;
}

/**
 * Hands the messages stored by /api/v1/emails to the relay (platform.md "Sending by HTTP"): SMTP
 * to RELAY_SUBMIT_URL, authenticated as the company's relay username with a submission token, so
 * the relay decides, signs, logs and counts them as it does every SMTP message. Runs in every
 * process where RELAY_SUBMIT_URL is set; a message is claimed first (on PostgreSQL with SKIP
 * LOCKED, so that replicas share the outbox), and only its claimer records the outcome.
 */
@Injectable()
export class EmailSubmissionWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EmailSubmissionWorker.name);
  private submitter?: RelaySubmitter;
  private readonly submissions = new Set<Promise<void>>();
  /** Messages the relay took, waiting to be recorded together. */
  private readonly handedOver: HandedOver[] = [];
  private recording?: Promise<void>;
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pendingWake = false;

  constructor(
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly config: AppConfig,
    private readonly tokens: SubmissionTokens,
    private readonly webhooks: WebhookOutbox,
    work: EmailWork,
  ) {
    work.onChange(() => this.nudge());
  }

  onApplicationBootstrap(): void {
    const url = this.config.env.RELAY_SUBMIT_URL;
    if (!url || !this.config.env.EMAIL_SUBMITTER) return;
    this.submitter = new RelaySubmitter({ url, logger: this.logger });
    this.running = true;
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
    await Promise.allSettled([...this.submissions]);
    await this.submitter?.close();
  }

  /** Looks for work now rather than at the next poll. */
  nudge(): void {
    this.pendingWake = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.config.env.RELAY_SUBMIT_CONCURRENCY - this.submissions.size;
      const claimedAt = Date.now();
      if (free > 0) {
        try {
          for (const claimed of await this.transactions.run((em) => this.claim(em, free))) {
            const submission = this.submit(claimed)
              .catch((e: unknown) => this.logger.error({ err: e }, 'A submission could not be recorded'))
              .finally(() => {
                this.submissions.delete(submission);
                this.nudge();
              });
            this.submissions.add(submission);
          }
        } catch (e: unknown) {
          this.logger.warn({ err: e }, 'Could not claim messages to submit; trying again shortly');
        }
      }
      await this.idle();
      const early = claimedAt + CLAIM_INTERVAL_MS - Date.now();
      if (early > 0 && this.running) await sleep(early);
    }
  }

  private async idle(): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return;
    }
    const controller = new AbortController();
    this.wake = () => controller.abort();
    await sleep(POLL_MS, undefined, { signal: controller.signal }).catch(() => undefined);
    this.wake = undefined;
    this.pendingWake = false;
  }

  private async claim(em: EntityManager, free: number): Promise<Claimed[]> {
    const now = new Date();
    const claim = randomUUID();
    const ids = await this.dialect.claimReady(em, Email, {
      // Queued and scheduled messages, and submitted ones with deferred recipients to hand over.
      ready: 'q.next_attempt_at <= :now',
      parameters: { now },
      order: ['nextAttemptAt', 'id'],
      total: free,
      set: {
        claim,
        // A scheduled message leaves the schedule (it can no longer be canceled); a submitted one stays submitted.
        status: () => "CASE WHEN status = 'scheduled' THEN 'queued' ELSE status END",
        nextAttemptAt: new Date(now.getTime() + CLAIM_MS),
      },
    });
    if (!ids.length) return [];
    const emails = (await em
      .createQueryBuilder(Email, 'email')
      .addSelect('email.content')
      .where({ id: In(ids), claim })
      .getMany()) as Claimed['email'][];
    const companies: Array<{ id: number | string; relay_username: string }> = await em
      .createQueryBuilder()
      .select(['c.id AS id', 'c.relay_username AS relay_username'])
      .from('companies', 'c')
      .where('c.id IN (:...ids)', { ids: [...new Set(emails.map((e) => e.companyId))] })
      .getRawMany();
    const usernames = new Map(companies.map((c) => [Number(c.id), c.relay_username]));
    return emails.map((email) => ({ email, relayUsername: usernames.get(email.companyId)! }));
  }

  private async submit({ email, relayUsername }: Claimed): Promise<void> {
    let result: SubmissionResult;
    try {
      const message = this.messageOf(email);
      result = await this.submitter!.submit(
        { user: relayUsername, pass: this.tokens.make(relayUsername) },
        message,
      );
    } catch (e: unknown) {
      if (e instanceof RelayUnavailableError)
        return this.retryLater(email, describe(e), e.recipients.rejected);
      if (e instanceof RelayRefusedError) return this.fail(email, describe(e));
      this.logger.error({ err: e, email: email.uuid }, 'Submission failed unexpectedly; trying again later');
      return this.retryLater(email, 'the message could not be handed to the relay');
    }
    await this.submitted(email, result);
  }

  private messageOf(email: Claimed['email']): SubmissionMessage {
    const content = JSON.parse(email.content ?? 'null') as EmailContent | null;
    if (!content) throw new Error(`email ${email.uuid} has no content`);
    const envelope = { from: email.envelopeFrom, to: recipientsOf(email) };
    if (content.kind === 'raw') return { envelope, raw: Buffer.from(content.raw, 'base64') };
    return {
      envelope,
      compose: {
        from: email.from,
        to: email.to,
        cc: email.cc,
        bcc: email.bcc,
        ...(email.replyTo !== null && { replyTo: email.replyTo }),
        subject: email.subject ?? '',
        ...(content.text !== undefined && { text: content.text }),
        ...(content.html !== undefined && { html: content.html }),
        ...(content.headers && { headers: content.headers }),
        attachments: (content.attachments ?? []).map((a) => ({
          filename: a.filename,
          content: Buffer.from(a.content, 'base64'),
          ...(a.contentType !== undefined && { contentType: a.contentType }),
          ...(a.contentId !== undefined && { contentId: a.contentId }),
        })),
        messageId: email.messageId,
        date: email.scheduledAt ?? email.createdAt,
      },
    };
  }

  /**
   * The relay took it: kept as submitted with its queue id, an `email.queued` per recipient taken.
   * Written with the others that finish within RECORD_INTERVAL_MS, in one transaction.
   */
  private submitted(email: Email, result: SubmissionResult): Promise<void> {
    return new Promise((recorded, failed) => {
      this.handedOver.push({ email, result, at: new Date(), recorded, failed });
      this.recordSoon();
    });
  }

  /** Records what waits within RECORD_INTERVAL_MS, and again when more came meanwhile. */
  private recordSoon(): void {
    this.recording ??= sleep(RECORD_INTERVAL_MS)
      .then(() => this.recordHandedOver())
      .finally(() => {
        this.recording = undefined;
        if (this.handedOver.length) this.recordSoon();
      });
  }

  private async recordHandedOver(): Promise<void> {
    while (this.handedOver.length) {
      const batch = this.handedOver.splice(0, RECORD_BATCH);
      try {
        await this.recordBatch(batch);
        for (const item of batch) item.recorded();
      } catch (e: unknown) {
        for (const item of batch) item.failed(e);
      }
    }
  }

  private async recordBatch(batch: HandedOver[]): Promise<void> {
    await this.transactions.run(async (em) => {
      const rows = batch.map(({ email, result, at }) => {
        const refused = refusalsOf(email, result.rejected);
        const refusedNames = new Set(refused.map((r) => r.email.toLowerCase()));
        const deferredNames = new Set(result.deferred.map((r) => r.email.toLowerCase()));
        const taken = recipientsOf(email).filter(
          (r) => !refusedNames.has(r.toLowerCase()) && !deferredNames.has(r.toLowerCase()),
        );
        // Deferred recipients go again later, in a submission of their own.
        const pending = recipientsOf(email).filter((r) => deferredNames.has(r.toLowerCase()));
        const attempts = email.attempts + 1;
        return {
          email,
          result,
          at,
          taken,
          refused,
          update: {
            match: { id: email.id, claim: email.claim },
            set: {
              status: 'submitted' as const,
              submittedAt: email.submittedAt ?? at,
              queueId: email.queueId ?? result.queueId,
              queueIds: result.queueId ? [...email.queueIds, result.queueId] : email.queueIds,
              relayResponse: result.response.slice(0, 500),
              accepted: email.accepted.filter((r) => !refusedNames.has(r.toLowerCase())),
              rejected: [...email.rejected, ...refused],
              pending,
              content: pending.length ? email.content : null,
              claim: null,
              nextAttemptAt: pending.length ? new Date(at.getTime() + retryDelayMs(attempts)) : null,
              attempts,
              lastError: pending.length ? result.deferred[0].response.slice(0, 500) : null,
              updatedAt: at,
            },
          },
        };
      });
      // Only the holder of a claim records it (one that lapsed was taken again elsewhere).
      const moved = new Set(
        await this.dialect.updateEach(
          em,
          Email,
          rows.map((r) => r.update),
          'id',
        ),
      );
      await this.webhooks.emit(
        em,
        rows
          .filter((r) => moved.has(r.email.id))
          .flatMap((r) => [
            ...r.taken.map((to) =>
              this.event(r.email, 'email.queued', to, r.at, { queueId: r.result.queueId }),
            ),
            ...r.refused.map(({ email: to, reason }) =>
              this.event(r.email, 'email.rejected', to, r.at, { reason }),
            ),
          ]),
      );
    });
  }

  /**
   * The relay cannot take it now: tried again later, or given up 24 hours after it was due. The
   * recipients it refused for good meanwhile (5xx while the others got 4xx) are rejected now.
   */
  private async retryLater(
    email: Claimed['email'],
    error: string,
    refusals: RecipientRefusal[] = [],
  ): Promise<void> {
    const due = email.scheduledAt ?? email.createdAt;
    if (Date.now() - due.getTime() >= GIVE_UP_AFTER_MS) return this.fail(email, error);
    const now = new Date();
    const attempts = email.attempts + 1;
    const refused = refusalsOf(email, refusals);
    await this.transactions.run(async (em) => {
      const moved = await em.update(
        Email,
        { id: email.id, claim: email.claim! },
        {
          attempts,
          lastError: error,
          claim: null,
          nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts)),
          ...(refused.length && withoutRecipients(email, refused)),
        },
      );
      if (!moved.affected) return;
      await this.webhooks.emit(
        em,
        refused.map(({ email: to, reason }) => this.event(email, 'email.rejected', to, now, { reason })),
      );
    });
  }

  /**
   * Given up, with an `email.failed` per recipient of this submission: a message the relay never
   * took is `failed`; one it took for some recipients stays `submitted`, the deferred ones rejected.
   */
  private async fail(email: Claimed['email'], error: string): Promise<void> {
    const now = new Date();
    const partly = email.status === 'submitted';
    await this.transactions.run(async (em) => {
      const moved = await em.update(
        Email,
        { id: email.id, claim: email.claim! },
        {
          ...(partly
            ? withoutRecipients(
                email,
                email.pending.map((to) => ({ email: to, reason: `gave up: ${error}`.slice(0, 300) })),
              )
            : { status: 'failed' as const }),
          attempts: email.attempts + 1,
          lastError: error,
          claim: null,
          nextAttemptAt: null,
          content: null,
        },
      );
      if (!moved.affected) return;
      await this.webhooks.emit(
        em,
        recipientsOf(email).map((to) => this.event(email, 'email.failed', to, now, { reason: error })),
      );
    });
  }

  private event(
    email: Email,
    type: 'email.queued' | 'email.failed' | 'email.rejected',
    to: string,
    at: Date,
    extra: Record<string, unknown>,
  ): NewWebhookEvent {
    const domain = senderDomainName(email.envelopeFrom);
    return {
      companyId: email.companyId,
      type,
      domain,
      fact: `${email.uuid}\n${type}\n${to.toLowerCase()}`,
      data: {
        emailId: email.uuid,
        messageId: email.messageId,
        domain,
        from: email.envelopeFrom,
        to,
        status: type.slice('email.'.length),
        at: at.toISOString(),
        ...extra,
        tags: email.tags,
        metadata: email.metadata,
      },
    };
  }
}

/** The recipients of a submission: all the message's at first, the deferred ones afterwards. */
function recipientsOf(email: Email): string[] {
  return email.status === 'submitted' ? email.pending : email.accepted;
}

/** Recipients the relay refused for good (5xx at RCPT TO), as the message's rejected ones. */
function refusalsOf(email: Email, refusals: readonly RecipientRefusal[]): RejectedRecipient[] {
  const mine = new Map(recipientsOf(email).map((r) => [r.toLowerCase(), r]));
  return refusals
    .filter((r) => mine.has(r.email.toLowerCase()))
    .map((r) => ({ email: mine.get(r.email.toLowerCase())!, reason: r.response.slice(0, 300) }));
}

/** The message's recipient lists with these ones moved from accepted (and pending) to rejected. */
function withoutRecipients(email: Email, gone: readonly RejectedRecipient[]): Partial<Email> {
  const names = new Set(gone.map((r) => r.email.toLowerCase()));
  return {
    accepted: email.accepted.filter((r) => !names.has(r.toLowerCase())),
    pending: email.pending.filter((r) => !names.has(r.toLowerCase())),
    rejected: [...email.rejected, ...gone],
  };
}

/** The relay's answer, or what went wrong when it gave none. */
function describe(e: RelayUnavailableError | RelayRefusedError): string {
  return (e.response ?? e.message).slice(0, 500);
}
