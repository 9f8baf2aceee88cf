import { Injectable, Module } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { chunks } from '../../database/chunks';
import { SqlDialect } from '../../database/sql-dialect';
import type { CleanRecord } from '../log-index/clean-record';
import { Email } from './entities/email.entity';

/** What the join reads of a message. */
const LINKED_FIELDS = ['uuid', 'companyId', 'messageId', 'queueIds', 'pending', 'tags', 'metadata'] as const;
type LinkedEmail = Pick<Email, (typeof LINKED_FIELDS)[number]>;

/** What a clean record of a message sent by HTTP carries of it. */
export interface EmailLink {
  emailId: string;
  tags: Record<string, string>;
  metadata: Record<string, string>;
}

/**
 * Joins clean records to the messages of /api/v1/emails they belong to (resources.md "Clean
 * log" `emailId`): the same company and Message-ID (made by the service, `<uuid@domain>`), and
 * one of the Postfix queues the relay's answers named. Kept apart from EmailsModule so the
 * ingest can load it without the sending side.
 */
@Injectable()
export class EmailLinks {
  constructor(private readonly dialect: SqlDialect) {}

  /** Sets `emailId` on the records that belong to a message, and answers each one's link by record id. */
  async link(em: EntityManager, records: readonly CleanRecord[]): Promise<Map<string, EmailLink>> {
    const links = new Map<string, EmailLink>();
    const candidates = records.filter(
      (r) => r.companyId !== null && r.messageId !== null && r.queueId !== null,
    );
    // A record keeps the Message-ID without its angle brackets (as Postfix's parser gives it), a
    // message as its header has it (`<uuid@domain>`, or a raw message's own): both spellings are looked up.
    const messageIds = [...new Set(candidates.flatMap((r) => [r.messageId!, `<${r.messageId!}>`]))];
    if (!messageIds.length) return links;
    const emails: LinkedEmail[] = [];
    for (const part of chunks(messageIds)) {
      emails.push(...(await this.dialect.findIn(em, Email, { in: { messageId: part } }, LINKED_FIELDS)));
    }
    if (!emails.length) return links;
    const byMessage = new Map<string, LinkedEmail[]>();
    for (const email of emails) {
      const bare = bareMessageId(email.messageId);
      byMessage.set(bare, [...(byMessage.get(bare) ?? []), email]);
    }
    for (const record of candidates) {
      const email = byMessage
        .get(bareMessageId(record.messageId!))
        ?.find((e) => e.companyId === record.companyId && isOfSubmission(e, record));
      if (!email) continue;
      record.emailId = email.uuid;
      links.set(record.id, { emailId: email.uuid, tags: email.tags, metadata: email.metadata });
    }
    return links;
  }
}

/**
 * A record belongs to one of the message's submissions: before the relay's answer was recorded
 * any queue fits; afterwards one whose id it gave, or a later submission of a recipient it deferred.
 */
function isOfSubmission(email: LinkedEmail, record: CleanRecord): boolean {
  if (!email.queueIds.length || email.queueIds.includes(record.queueId!)) return true;
  const to = record.to.toLowerCase();
  return email.pending.some((r) => r.toLowerCase() === to);
}

/** A Message-ID as clean records keep it: without the angle brackets of its header. */
export function bareMessageId(messageId: string): string {
  return messageId.replace(/^<(.*)>$/s, '$1');
}

/** EmailLinks alone, for the delivery records' rebuild. */
@Module({
  providers: [EmailLinks],
  exports: [EmailLinks],
})
export class EmailLinksModule {}
