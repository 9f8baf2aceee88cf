import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThanOrEqual, Repository } from 'typeorm';
import { sha256Hex } from '../../common/secrets';
import { SqlDialect } from '../../database/sql-dialect';
import { Job } from '../jobs/job.decorator';
import { RevokedRefreshToken } from './entities/revoked-refresh-token.entity';

/** Revoked refresh tokens, kept in the database (every replica sees a revoke at once) as digests. */
@Injectable()
export class BlacklistService {
  constructor(
    @InjectRepository(RevokedRefreshToken) private readonly revoked: Repository<RevokedRefreshToken>,
    private readonly dialect: SqlDialect,
  ) {}

  async isRevoked(token: string): Promise<boolean> {
    return this.revoked.exists({ where: { tokenHash: sha256Hex(token) } });
  }

  /** Idempotent: revoking an already-revoked token changes nothing. */
  async revoke(token: string, expiresAt: Date): Promise<void> {
    await this.dialect.insertMany(
      this.revoked.manager,
      RevokedRefreshToken,
      [{ tokenHash: sha256Hex(token), expiresAt }],
      'ignore',
    );
  }

  /** `purge-blacklist` (hourly): deletes entries whose token has expired anyway; returns how many. */
  @Job('purge-blacklist', { shared: true })
  async purgeExpired(now = new Date()): Promise<number> {
    const result = await this.revoked.delete({ expiresAt: LessThanOrEqual(now) });
    return result.affected ?? 0;
  }
}
