import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Company } from './entities/company.entity';

/** Work another area does inside the registration transaction (the CRM queues the new company). */
export type RegistrationHook = (em: EntityManager, company: Company) => Promise<void>;

/**
 * Areas that react to a sign-up register here at start-up: they depend on this area, so it
 * cannot import them. Each hook runs in the registration's transaction, so what it writes
 * commits or rolls back with the company.
 */
@Injectable()
export class CompanyRegistrationHooks {
  private readonly hooks: RegistrationHook[] = [];

  add(hook: RegistrationHook): void {
    this.hooks.push(hook);
  }

  async run(em: EntityManager, company: Company): Promise<void> {
    for (const hook of this.hooks) await hook(em, company);
  }
}
