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

/** One entry to add (SuppressionService.addEach): its list (`companyId` null: the global one) and address. */
export interface NewSuppression {
  companyId: number | null;
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail?: string | null;
  expiresAt?: Date | null;
}

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
      const email = normalised(raw);
      if (email) emails.add(email);
      else invalid.push(raw);
    }
    if (emails.size === 0) return { added: 0, existing: 0, invalid };
    const entries = [...emails].map((email) => ({ companyId, email, ...fieldsOf(input) }));
    const added = await (em ? this.write(em, entries) : this.transactions.run((m) => this.write(m, entries)));
    return { added, existing: emails.size - added, invalid };
  }

  /**
   * Adds entries of any lists, each with its own reason and detail, in the caller's transaction,
   * as `add` adds each (an address that does not parse is passed over; of two entries for one
   * address of one list, the first is kept): the log's hard bounces and a provider batch's
   * complaints and bounces, whatever their companies, in a few statements rather than a few per
   * entry. Answers how many were added or renewed.
   */
  addEach(em: EntityManager, entries: readonly NewSuppression[]): Promise<number> {
    const unique = new Map<string, NewSuppression>();
    for (const entry of entries) {
      const email = normalised(entry.email);
      if (!email) continue;
      const key = listKey(entry.companyId, email);
      if (!unique.has(key)) unique.set(key, { ...entry, email });
    }
    return unique.size ? this.write(em, [...unique.values()]) : Promise.resolve(0);
  }

  /**
   * Writes entries of normalised, distinct addresses per list: those listed and unexpired are left
   * as they are, expired ones renewed with the new fields, the others inserted; each entry made or
   * renewed is its company's suppression.created event. Answers how many were made or renewed,
   * counted by what the statements really changed: an entry another request renewed or inserted
   * since the lookup counts as existing.
   */
  private async write(manager: EntityManager, entries: readonly NewSuppression[]): Promise<number> {
    const now = new Date();
    const companyIds = [...new Set(entries.flatMap((e) => (e.companyId === null ? [] : [e.companyId])))];
    const global = entries.some((e) => e.companyId === null);
    const found = await manager
      .createQueryBuilder(SuppressionEntry, 'entry')
      .where('entry.email IN (:...emails)', { emails: [...new Set(entries.map((e) => e.email))] })
      .andWhere(
        new Brackets((w) => {
          if (companyIds.length) w.orWhere('entry.companyId IN (:...companyIds)', { companyIds });
          if (global) w.orWhere('entry.companyId IS NULL');
        }),
      )
      .getMany();
    const listed = new Map(found.map((entry) => [listKey(entry.companyId, entry.email), entry]));
    const made: NewSuppression[] = [];
    const expired = new Map<
      string,
      { fields: EntryFields; entries: Array<[SuppressionEntry, NewSuppression]> }
    >();
    const fresh: NewSuppression[] = [];
    for (const entry of entries) {
      const stored = listed.get(listKey(entry.companyId, entry.email));
      if (!stored) fresh.push(entry);
      else if (stored.expiresAt && stored.expiresAt <= now) {
        const fields = fieldsOf(entry);
        const key = JSON.stringify(fields);
        let group = expired.get(key);
        if (!group) expired.set(key, (group = { fields, entries: [] }));
        group.entries.push([stored, entry]);
      }
    }
    for (const { fields, entries: renewals } of expired.values()) {
      const renewed =
        (
          await manager
            .createQueryBuilder()
            .update(SuppressionEntry)
            .set(fields)
            .whereInIds(renewals.map(([stored]) => stored.id))
            .andWhere('expires_at <= :now', { now })
            .execute()
        ).affected ?? 0;
      made.push(...renewals.slice(0, renewed).map(([, entry]) => entry));
    }
    made.push(...(await this.insertMissing(manager, fresh)));
    await this.webhooks.emit(
      manager,
      made.flatMap(({ companyId, email, ...rest }) => {
        if (companyId === null) return [];
        const fields = fieldsOf(rest);
        return [
          {
            companyId,
            type: 'suppression.created' as const,
            data: { email, ...fields, expiresAt: fields.expiresAt?.toISOString() ?? null },
          },
        ];
      }),
    );
    return made.length;
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
   * Inserts what is not listed yet and answers the entries it inserted. A concurrent request
   * may have added the same address since the lookup: the unique index then skips it, and only
   * the rows really inserted count.
   */
  private async insertMissing(manager: EntityManager, entries: NewSuppression[]): Promise<NewSuppression[]> {
    const rows = entries.map((entry) => ({ uuid: randomUUID(), ...entry, ...fieldsOf(entry) }));
    const inserted = new Set(await this.dialect.insertNew(manager, SuppressionEntry, rows, 'uuid'));
    return entries.filter((_, at) => inserted.has(rows[at].uuid));
  }
}

/** One address of one list (`companyId` null: the global one). */
const listKey = (companyId: number | null, email: string): string => `${companyId}\n${email}`;

/** An address as lists keep it (trimmed, lower case), or null when it does not parse. */
function normalised(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return isEmail(email) ? email : null;
}

type EntryFields = Pick<SuppressionEntry, 'reason' | 'source' | 'detail' | 'expiresAt'>;

/** What an entry is written with, beside its list and address. */
function fieldsOf(entry: Omit<NewSuppression, 'companyId' | 'email'>): EntryFields {
  return {
    reason: entry.reason,
    source: entry.source,
    detail: entry.detail ?? null,
    expiresAt: entry.expiresAt ?? null,
  };
}
