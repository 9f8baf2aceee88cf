import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { isEmail } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Brackets, EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { CompaniesService } from '../companies/companies.service';
import { csvCell } from '../../common/csv';
import { containsPattern } from '../../common/search';
import { ListSuppressionQueryDto } from './dto/suppression-requests.dto';
import {
  SuppressionAddedDto,
  SuppressionCheckDto,
  SuppressionEntryDto,
} from './dto/suppression-response.dto';
import { SuppressionEntry, SuppressionReason, SuppressionSource } from './entities/suppression-entry.entity';

export const SUPPRESSION_NOT_FOUND = 'Suppression entry not found';
const EXPORT_BATCH = 1000;

/** Which list: one company's (by id), the global one, or (admins) every list. */
export type SuppressionScope = { companyId: number } | 'global' | 'all';

export interface NewSuppressions {
  emails: string[];
  reason: SuppressionReason;
  source: SuppressionSource;
  detail?: string | null;
  expiresAt?: Date | null;
}

@Injectable()
export class SuppressionService {
  constructor(
    @InjectRepository(SuppressionEntry) private readonly entries: Repository<SuppressionEntry>,
    private readonly companies: CompaniesService,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly webhooks: WebhookOutbox,
  ) {}

  async list(scope: SuppressionScope, q: ListSuppressionQueryDto): Promise<Page<SuppressionEntryDto>> {
    const qb = this.inScope(
      this.entries.createQueryBuilder('entry').leftJoinAndSelect('entry.company', 'company'),
      scope,
    );
    if (q.reason) qb.andWhere('entry.reason = :reason', { reason: q.reason });
    if (q.search) {
      qb.andWhere("entry.email LIKE :pattern ESCAPE '\\'", { pattern: containsPattern(q.search) });
    }
    const [rows, total] = await qb
      .orderBy('entry.createdAt', 'DESC')
      .addOrderBy('entry.id', 'DESC')
      .skip(skipFor(q.page, q.limit))
      .take(q.limit)
      .getManyAndCount();
    return toPage(
      rows.map((entry) => SuppressionEntryDto.from(entry)),
      total,
      q.page,
      q.limit,
    );
  }

  /**
   * Adds the addresses to one list (`companyId` null: the global list). Addresses that do not
   * parse come back in `invalid`; those already listed count as `existing`, except expired
   * entries, which are renewed with the new reason and count as `added`.
   */
  async add(
    companyId: number | null,
    input: NewSuppressions,
    /** The caller's open transaction, when the entries must be written in it. */
    em?: EntityManager,
  ): Promise<SuppressionAddedDto> {
    const invalid: string[] = [];
    const emails = new Set<string>();
    for (const raw of input.emails) {
      const email = raw.trim().toLowerCase();
      if (isEmail(email)) emails.add(email);
      else invalid.push(raw);
    }
    if (emails.size === 0) return { added: 0, existing: 0, invalid };

    const inTransaction = <T>(work: (manager: EntityManager) => Promise<T>) =>
      em ? work(em) : this.transactions.run(work);
    const { added, existing } = await inTransaction(async (manager) => {
      const now = new Date();
      const found = await this.inScope(
        manager.createQueryBuilder(SuppressionEntry, 'entry'),
        companyId === null ? 'global' : { companyId },
      )
        .andWhere('entry.email IN (:...emails)', { emails: [...emails] })
        .getMany();
      const listed = new Map(found.map((entry) => [entry.email, entry]));
      const expired = found.filter((entry) => entry.expiresAt && entry.expiresAt <= now);
      const fresh = [...emails].filter((email) => !listed.has(email));
      const fields = {
        reason: input.reason,
        source: input.source,
        detail: input.detail ?? null,
        expiresAt: input.expiresAt ?? null,
      };
      // Counted by what the statements really changed: an entry another request renewed or
      // inserted since the lookup counts as existing.
      const renewed = expired.length
        ? ((
            await manager
              .createQueryBuilder()
              .update(SuppressionEntry)
              .set(fields)
              .whereInIds(expired.map((entry) => entry.id))
              .andWhere('expires_at <= :now', { now })
              .execute()
          ).affected ?? 0)
        : 0;
      const inserted = await this.insertMissing(manager, companyId, fresh, fields);
      const addedNow = renewed + inserted.length;
      if (companyId !== null) {
        // Each entry made (or renewed) is the company's suppression.created event.
        const made = [...expired.slice(0, renewed).map((entry) => entry.email), ...inserted];
        await this.webhooks.emit(
          manager,
          made.map((email) => ({
            companyId,
            type: 'suppression.created' as const,
            data: { email, ...fields, expiresAt: fields.expiresAt?.toISOString() ?? null },
          })),
        );
      }
      return { added: addedNow, existing: emails.size - addedNow };
    });
    return { added, existing, invalid };
  }

  /** Whether the company may send to `email`: its own list first, then the global one. */
  async check(companyId: number, email: string): Promise<SuppressionCheckDto> {
    const rows = await this.entries
      .createQueryBuilder('entry')
      .leftJoinAndSelect('entry.company', 'company')
      .where('entry.email = :email', { email })
      .andWhere(
        new Brackets((w) =>
          w.where('entry.companyId = :companyId', { companyId }).orWhere('entry.companyId IS NULL'),
        ),
      )
      .andWhere(
        new Brackets((w) =>
          w.where('entry.expiresAt IS NULL').orWhere('entry.expiresAt > :now', { now: new Date() }),
        ),
      )
      .getMany();
    const own = rows.find((entry) => entry.companyId !== null);
    const global = rows.find((entry) => entry.companyId === null);
    const applies = own ?? global;
    return {
      suppressed: applies !== undefined,
      ...(applies ? { entry: SuppressionEntryDto.from(applies) } : {}),
      global: global !== undefined,
    };
  }

  /**
   * A user removes an entry of its own company (the ownership guard loaded it); `complaint`
   * entries are for admins to remove.
   */
  async removeOwn(entry: SuppressionEntry): Promise<void> {
    if (entry.reason === 'complaint') {
      throw new ForbiddenError('Complaint entries can only be removed by an admin');
    }
    await this.delete(entry);
  }

  /** An admin removes any entry, of any company or of the global list. */
  async remove(uuid: string): Promise<void> {
    const entry = await this.entries.findOneBy({ uuid });
    if (!entry || !(await this.delete(entry))) throw new NotFoundError(SUPPRESSION_NOT_FOUND);
  }

  /** Deletes the entry, with the company's suppression.deleted event; false when it was gone already. */
  private delete(entry: SuppressionEntry): Promise<boolean> {
    return this.transactions.run(async (em) => {
      const result = await em.delete(SuppressionEntry, { id: entry.id });
      if (!result.affected) return false;
      if (entry.companyId !== null) {
        await this.webhooks.emit(em, [
          {
            companyId: entry.companyId,
            type: 'suppression.deleted',
            data: { email: entry.email, reason: entry.reason, source: entry.source },
          },
        ]);
      }
      return true;
    });
  }

  /** The company's list as CSV, read in batches so a long list never sits in memory whole. */
  exportCsv(companyId: number): Readable {
    const entries = this.entries;
    async function* lines(): AsyncGenerator<string> {
      yield 'email,reason,source,detail,expires_at,created_at\n';
      for (let lastId = 0; ;) {
        const batch = await entries
          .createQueryBuilder('entry')
          .where('entry.companyId = :companyId', { companyId })
          .andWhere('entry.id > :lastId', { lastId })
          .orderBy('entry.id', 'ASC')
          .take(EXPORT_BATCH)
          .getMany();
        if (!batch.length) return;
        yield batch
          .map((e) =>
            [
              e.email,
              e.reason,
              e.source,
              e.detail ?? '',
              e.expiresAt?.toISOString() ?? '',
              e.createdAt.toISOString(),
            ]
              .map(csvCell)
              .join(','),
          )
          .join('\n')
          .concat('\n');
        lastId = batch[batch.length - 1].id;
      }
    }
    return Readable.from(lines());
  }

  /** An admin names a company by uuid: 404 when there is none. */
  async companyIdOf(companyUuid: string): Promise<number> {
    return this.companies.idOf(companyUuid);
  }

  /** `expiresAt` must lie ahead: an entry that is expired from the start would suppress nothing. */
  static futureDate(value: string | undefined): Date | null {
    if (value === undefined) return null;
    const date = new Date(value);
    if (Number.isNaN(date.getTime()) || date.getTime() <= Date.now()) {
      throw new BadRequestError('expiresAt must be a date in the future');
    }
    return date;
  }

  private inScope<T extends SelectQueryBuilder<SuppressionEntry>>(qb: T, scope: SuppressionScope): T {
    if (scope === 'global') qb.andWhere('entry.companyId IS NULL');
    else if (scope !== 'all') qb.andWhere('entry.companyId = :companyId', { companyId: scope.companyId });
    return qb;
  }

  /**
   * Inserts what is not listed yet and answers the addresses it inserted. A concurrent request
   * may have added the same address since the lookup: the unique index then skips it, and only
   * the rows really inserted count.
   */
  private async insertMissing(
    manager: EntityManager,
    companyId: number | null,
    emails: string[],
    fields: Pick<SuppressionEntry, 'reason' | 'source' | 'detail' | 'expiresAt'>,
  ): Promise<string[]> {
    const rows = emails.map((email) => ({ uuid: randomUUID(), companyId, email, ...fields }));
    const inserted = new Set(await this.dialect.insertNew(manager, SuppressionEntry, rows, 'uuid'));
    return rows.filter((row) => inserted.has(row.uuid)).map((row) => row.email);
  }
}
