import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Messages counted against a company's quota per UTC day (the `daily` series of the usage route). */
@Entity('company_usage_days')
export class CompanyUsageDay {
  @PrimaryColumn({ type: 'integer' })
  companyId: number;

  /** `YYYY-MM-DD`, UTC. */
  @PrimaryColumn({ type: 'varchar', length: 10 })
  day: string;

  @Column({ type: 'integer', default: 0 })
  count: number;
}
