import { Injectable } from '@nestjs/common';
import { EntityManager, MoreThan } from 'typeorm';
import { BadRequestError, NotFoundError } from '../../common/errors/domain-error';
import { sha256Hex } from '../../common/secrets';
import { AppConfig } from '../../config/app-config';
import { CompanyAttribution } from '../attribution/company-attribution.service';
import { TransactionService } from '../../database/transaction.service';
import { CompanyStateService } from '../companies/company-state.service';
import type { Company } from '../companies/entities/company.entity';
import { Notifier } from '../notifications/notifier';
import { SuppressionService } from '../suppression/suppression.service';
import { SpamReportDto, SpamReportResultDto } from './dto/spam-report.dto';
import { SpamReport } from './entities/spam-report.entity';

const DAY_MS = 86_400_000;
/** The reason a company suspended by spam reports carries. */
export const SPAM_SUSPENSION_REASON = 'spam';

export interface SpamReportOutcome extends SpamReportResultDto {
  /** False when the same report (company, message id, recipient) had been received before. */
  created: boolean;
}

/**
 * Spam reports (resources.md "Spam report"): each is stored, notifies the company's users and
 * suppresses the recipient for the company; the report that brings a company to
 * SPAM_SUSPEND_THRESHOLD reports within 24 hours suspends it. All of it in one transaction with
 * the company row locked, so concurrent reports count and suspend exactly once; the suspension
 * itself (row, audit, announcement after the commit) is CompanyStateService's.
 */
@Injectable()
export class SpamReportsService {
  constructor(
    private readonly transactions: TransactionService,
    private readonly companyState: CompanyStateService,
    private readonly suppression: SuppressionService,
    private readonly notifications: Notifier,
    private readonly config: AppConfig,
    private readonly attribution: CompanyAttribution,
  ) {}

  async report(dto: SpamReportDto, reportedBy: string): Promise<SpamReportOutcome> {
    if (!dto.relayUsername && !dto.companyUuid && !dto.sender) {
      throw new BadRequestError('One of relayUsername, companyUuid or sender is required');
    }
    const now = new Date();
    return this.transactions.run(async (em) => {
      const company = await this.lockCompany(em, dto);
      const dedupeKey = dto.messageId
        ? sha256Hex(`${company.id}\n${dto.messageId}\n${dto.recipient ?? ''}`)
        : null;
      const earlier = dedupeKey ? await em.findOne(SpamReport, { where: { dedupeKey } }) : null;
      if (earlier) {
        return {
          reportUuid: earlier.uuid,
          companySuspended: company.status === 'suspended',
          created: false,
        };
      }

      const report = await em.save(
        em.create(SpamReport, {
          companyId: company.id,
          reportedBy,
          messageId: dto.messageId ?? null,
          recipient: dto.recipient ?? null,
          reason: dto.reason ?? null,
          score: dto.score ?? null,
          receivedAt: now,
          dedupeKey,
        }),
      );
      if (dto.recipient) {
        await this.suppression.add(
          company.id,
          {
            emails: [dto.recipient],
            reason: 'spam_report',
            source: 'spam_report',
            detail: dto.reason ?? null,
          },
          em,
        );
      }
      await this.notifications.notifyCompanyUsers(
        company.id,
        {
          type: 'spam.reported',
          title: 'A message was reported as spam',
          body:
            `A message sent through the relay by ${company.name} was reported as spam` +
            `${dto.recipient ? ` by ${dto.recipient}` : ''}${dto.reason ? ` (${dto.reason})` : ''}. ` +
            `${this.config.env.SPAM_SUSPEND_THRESHOLD} reports within 24 hours suspend the company.`,
          data: { reportUuid: report.uuid, messageId: report.messageId },
        },
        em,
      );

      const recent = await em.count(SpamReport, {
        where: { companyId: company.id, receivedAt: MoreThan(new Date(now.getTime() - DAY_MS)) },
      });
      if (company.status !== 'suspended' && recent >= this.config.env.SPAM_SUSPEND_THRESHOLD) {
        await this.suspend(em, company, recent);
      }
      return { reportUuid: report.uuid, companySuspended: company.status === 'suspended', created: true };
    });
  }

  /**
   * The company the report names, locked for the rest of the transaction (PostgreSQL): by its
   * uuid, else by the one attribution rule from the relay username or the sender's verified domain.
   */
  private async lockCompany(em: EntityManager, dto: SpamReportDto): Promise<Company> {
    if (dto.companyUuid && !dto.relayUsername) return this.companyState.lock(em, { uuid: dto.companyUuid });
    const company = await this.attribution.companyOf({
      relayUsername: dto.relayUsername,
      sender: dto.sender,
    });
    if (!company) {
      throw new NotFoundError(dto.relayUsername ? 'Company not found' : 'No company found for this sender');
    }
    return this.companyState.lock(em, { id: company.id });
  }

  private async suspend(em: EntityManager, company: Company, reports: number): Promise<void> {
    await this.companyState.changeStatus(em, company, {
      status: 'suspended',
      reason: SPAM_SUSPENSION_REASON,
      adminUuid: null,
      detail: { spamReports24h: reports },
      notice: {
        usersBody:
          `${company.name} received ${reports} spam reports within 24 hours (the limit is ` +
          `${this.config.env.SPAM_SUSPEND_THRESHOLD}) and has been suspended: the relay no longer accepts its ` +
          'mail. Contact support to have it reviewed.',
        adminsTitle: `Company suspended for spam: ${company.name}`,
        adminsBody: `${company.name} received ${reports} spam reports within 24 hours and was suspended automatically.`,
      },
    });
  }
}
