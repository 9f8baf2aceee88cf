import { Column, Entity } from 'typeorm';
import { bigintAsNumber } from '../../../database/column-types';
import { BaseEntity } from '../../../database/base.entity';

/** A monthly sending quota offered for a price. Archived (isActive = false) instead of deleted once used. */
@Entity('packages')
export class Package extends BaseEntity {
  @Column({ type: 'varchar', length: 100, unique: true })
  name: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description: string | null;

  /** Messages per period. */
  @Column({ type: 'integer' })
  quota: number;

  /** Integer minor units of `currency`. */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  price: number;

  @Column({ type: 'varchar', length: 3 })
  currency: string;

  @Column({ type: 'integer', default: 30 })
  durationDays: number;

  @Column({ type: 'boolean', default: true })
  isPublic: boolean;

  @Column({ type: 'boolean', default: true })
  isActive: boolean;
}
