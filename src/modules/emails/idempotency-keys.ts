import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { EntityManager, IsNull, LessThan, Repository } from 'typeorm';
import { BadRequestError, ConflictError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { Job } from '../jobs/job.decorator';
import { IdempotencyKey } from './entities/idempotency-key.entity';

/** platform.md: a key is kept 24 hours per company. */
export const IDEMPOTENCY_KEPT_MS = 86_400_000;
/** A first request still "in progress" after this long died with its process: a retry takes its key. */
const ABANDONED_MS = 2 * 60_000;
const PRINTABLE = /^[\x20-\x7e]{1,256}$/;

export const KEY_REUSED = 'Idempotency-Key reused with another request';
export const KEY_IN_PROGRESS = 'Request with this Idempotency-Key in progress';

/** The answer of a request, new or given again. */
export interface IdempotentAnswer<T> {
  /** 200 when it is the first request's answer given again. */
  status: number;
  data: T;
}

/**
 * `Idempotency-Key` of the sending routes (platform.md "Sending by HTTP"). The key is taken
 * first, in a transaction of its own (a unique row per company and key), so that a second request
 * with it sees it while the first is handled; the first request's answer is then kept in the
 * transaction that stores its messages, so an answer exists exactly when its messages do. A first
 * request that failed gives its key back; one whose process died gives it back after 2 minutes.
 */
@Injectable()
export class IdempotencyKeys {
  constructor(
    @InjectRepository(IdempotencyKey) private readonly keys: Repository<IdempotencyKey>,
    private readonly dialect: SqlDialect,
  ) {}

  /**
   * Runs `handle` once per company, key and request: `handle` gets `keep`, to call inside the
   * transaction that stores what it made, with the answer. Without a key, `handle` just runs
   * (and gets null: there is nothing to keep).
   */
  async run<T>(
    companyId: number,
    key: string | undefined,
    request: { route: string; body: unknown },
    handle: (keep: ((em: EntityManager, data: T) => Promise<void>) | null) => Promise<IdempotentAnswer<T>>,
  ): Promise<IdempotentAnswer<T>> {
    if (key === undefined) return handle(null);
    if (!PRINTABLE.test(key)) {
      throw new BadRequestError('Idempotency-Key must be 1 to 256 printable characters');
    }
    const requestHash = createHash('sha256')
      .update(`${request.route}\n${JSON.stringify(request.body)}`)
      .digest('hex');
    const taken = await this.take<T>(companyId, key, requestHash);
    if (taken !== 'taken') return taken;
    try {
      return await handle(async (em, data) => {
        await em.update(
          IdempotencyKey,
          { companyId, key },
          { responseStatus: HttpStatus.ACCEPTED, response: JSON.stringify(data) },
        );
      });
    } catch (e: unknown) {
      // Nothing was stored: the key is free for a retry (a 4xx may be mended, a 5xx passes).
      await this.keys.delete({ companyId, key, responseStatus: IsNull() });
      throw e;
    }
  }

  /** Takes the key, or answers what a request that took it before answered. */
  private async take<T>(
    companyId: number,
    key: string,
    requestHash: string,
  ): Promise<'taken' | IdempotentAnswer<T>> {
    for (let round = 0; round < 2; round++) {
      const inserted = await this.dialect.insertMany(
        this.keys.manager,
        IdempotencyKey,
        [{ companyId, key, requestHash, responseStatus: null, response: null, createdAt: new Date() }],
        'ignore',
      );
      if (inserted === 1) return 'taken';
      const held = await this.keys.findOneBy({ companyId, key });
      if (!held) continue;
      const age = Date.now() - held.createdAt.getTime();
      const stale = age >= IDEMPOTENCY_KEPT_MS || (held.responseStatus === null && age >= ABANDONED_MS);
      if (stale) {
        // Given back once, whoever of two retries gets there first.
        await this.keys.delete({ id: held.id, createdAt: held.createdAt });
        continue;
      }
      if (held.requestHash !== requestHash) throw new ConflictError(KEY_REUSED);
      if (held.responseStatus === null || held.response === null) throw new ConflictError(KEY_IN_PROGRESS);
      return { status: HttpStatus.OK, data: JSON.parse(held.response) as T };
    }
    throw new ConflictError(KEY_IN_PROGRESS);
  }

  /** A part of `purge-blacklist` (hourly): drops the keys older than 24 hours, answers how many. */
  @Job('purge-blacklist', { shared: true })
  async purgeExpired(now = new Date()): Promise<number> {
    const result = await this.keys.delete({
      createdAt: LessThan(new Date(now.getTime() - IDEMPOTENCY_KEPT_MS)),
    });
    return result.affected ?? 0;
  }
}
