import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { DATETIME } from '../../../database/column-types';

/**
 * An `Idempotency-Key` a company sent in the last 24 hours (platform.md "Sending by HTTP"): the
 * request it came with (a digest) and, once handled, the answer given, to give it again.
 */
@Entity('idempotency_keys')
@Index('uq_idempotency_company_key', ['companyId', 'key'], { unique: true })
@Index('ix_idempotency_created', ['createdAt'])
export class IdempotencyKey {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  companyId: number;

  @Column({ type: 'varchar', length: 256 })
  key: string;

  /** SHA-256 (hex) of the route and the body. */
  @Column({ type: 'varchar', length: 64 })
  requestHash: string;

  /** The answer's status; null while the first request is being handled. */
  @Column({ type: 'integer', nullable: true })
  responseStatus: number | null;

  /** The answer's data, as JSON. */
  @Column({ type: 'text', nullable: true })
  response: string | null;

  @CreateDateColumn({ type: DATETIME })
  createdAt: Date;
}
