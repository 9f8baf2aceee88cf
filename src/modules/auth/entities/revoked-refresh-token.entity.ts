import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/** The refresh-token blacklist: a SHA-256 of the token, never the token itself. */
@Entity('refresh_token_blacklist')
export class RevokedRefreshToken {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  tokenHash: string;

  @Column({ type: DATETIME })
  expiresAt: Date;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
