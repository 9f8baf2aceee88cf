import { EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { NotFoundError } from '../../common/errors/domain-error';
import { SqlDialect } from '../../database/sql-dialect';
import { Billing } from './entities/billing.entity';

export const BILLING_NOT_FOUND = 'Billing not found';

/** Billings with what their DTOs need: the company's uuid and name, the package's uuid. */
export function billingsWithRefs(repo: Repository<Billing>): SelectQueryBuilder<Billing> {
  return repo
    .createQueryBuilder('billing')
    .innerJoin('billing.company', 'company')
    .addSelect(['company.id', 'company.uuid', 'company.name'])
    .innerJoin('billing.package', 'package')
    .addSelect(['package.id', 'package.uuid']);
}

/**
 * The billing row inside a transaction, locked on PostgreSQL (SQLite runs transactions one
 * at a time), so a transition reads the status it changes.
 */
export async function lockBilling(em: EntityManager, dialect: SqlDialect, uuid: string): Promise<Billing> {
  const qb = em.getRepository(Billing).createQueryBuilder('billing').where('billing.uuid = :uuid', { uuid });
  const billing = await dialect.forUpdate(qb).getOne();
  if (!billing) throw new NotFoundError(BILLING_NOT_FOUND);
  return billing;
}
