import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { NotFoundError } from '../../common/errors/domain-error';
import { randomToken, sha256Hex } from '../../common/secrets';
import { AppConfig } from '../../config/app-config';
import { TransactionService } from '../../database/transaction.service';
import { CompanyStateService } from './company-state.service';
import { Company, MailboxSuite } from './entities/company.entity';

/** What a setup script is made of, on the company's side. */
export interface CompanyMailboxSettings {
  companyId: number;
  relayUsername: string;
  mailboxSuite: MailboxSuite;
  mailboxGroupName: string | null;
  /** `{PUBLIC_URL}/public/company/script/<token>`, or null before the first token. */
  scriptUrl: string | null;
}

/**
 * The company's mailbox-suite choice and its script token (resources.md, Company): 32 random
 * bytes, base64url, stored as a SHA-256 digest for the public lookup and AES-256-GCM-encrypted
 * so the owner can see the URL again. A new token replaces the old one, whose URL then 404s.
 */
@Injectable()
export class CompanyMailboxSettingsService {
  private readonly logger = new Logger(CompanyMailboxSettingsService.name);

  constructor(
    @InjectRepository(Company) private readonly companies: Repository<Company>,
    private readonly transactions: TransactionService,
    private readonly state: CompanyStateService,
    private readonly encryption: EncryptionService,
    private readonly config: AppConfig,
  ) {}

  async of(companyId: number): Promise<CompanyMailboxSettings> {
    const company = await this.companies
      .createQueryBuilder('company')
      .addSelect('company.scriptTokenCipher')
      .where({ id: companyId })
      .getOne();
    if (!company) throw new NotFoundError('Company not found');
    return this.settings(company);
  }

  /** The company whose current script token this is, or null (a digest lookup on a unique index). */
  async byScriptToken(token: string): Promise<CompanyMailboxSettings | null> {
    const company = await this.companies
      .createQueryBuilder('company')
      .addSelect('company.scriptTokenCipher')
      .where('company.scriptTokenHash = :hash', { hash: sha256Hex(token) })
      .getOne();
    return company ? this.settings(company) : null;
  }

  async save(companyId: number, suite: MailboxSuite, groupName: string | null): Promise<void> {
    await this.companies.update({ id: companyId }, { mailboxSuite: suite, mailboxGroupName: groupName });
  }

  /** A new token for the company, recorded in its audit events; returns the new URL. */
  async rotateScriptToken(companyId: number, adminUuid: string | null): Promise<string> {
    const token = randomToken(32);
    await this.transactions.run(async (em) => {
      await em.update(
        Company,
        { id: companyId },
        { scriptTokenHash: sha256Hex(token), scriptTokenCipher: this.encryption.encrypt(token) },
      );
      await this.state.audit(em, companyId, adminUuid, 'script_token.rotated', null);
    });
    return this.urlOf(token);
  }

  private settings(company: Company): CompanyMailboxSettings {
    return {
      companyId: company.id,
      relayUsername: company.relayUsername,
      mailboxSuite: company.mailboxSuite,
      mailboxGroupName: company.mailboxGroupName,
      scriptUrl: company.scriptTokenCipher ? this.decryptedUrl(company) : null,
    };
  }

  private decryptedUrl(company: Company): string | null {
    try {
      return this.urlOf(this.encryption.decrypt(company.scriptTokenCipher!));
    } catch {
      // Sealed with another ENCRYPTION_KEY: the owner makes a new token.
      this.logger.warn({ companyUuid: company.uuid }, 'Script token cannot be decrypted with ENCRYPTION_KEY');
      return null;
    }
  }

  private urlOf(token: string): string {
    return `${this.config.publicUrl}/public/company/script/${token}`;
  }
}
