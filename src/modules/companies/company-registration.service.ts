import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ConflictError } from '../../common/errors/domain-error';
import { TransactionService } from '../../database/transaction.service';
import { PasswordService } from '../auth/password.service';
import { CrmRegistrationQueue } from '../crm/crm-registration-queue';
import { Notifier } from '../notifications/notifier';
import { CompanyMembersService } from '../users/company-members.service';
import { RegisterDto } from '../users/dto/user-requests.dto';
import { CompanySummaryDto, RegisteredDto, UserDto } from '../users/dto/user-response.dto';
import { UsersService } from '../users/users.service';
import { Company } from './entities/company.entity';

/**
 * Sign-up: a new company and its owner. It lives in the companies area because it writes the
 * company; the owner and its contact are made by the users area.
 */
@Injectable()
export class CompanyRegistrationService {
  constructor(
    private readonly transactions: TransactionService,
    private readonly passwords: PasswordService,
    private readonly members: CompanyMembersService,
    private readonly users: UsersService,
    private readonly notifications: Notifier,
    private readonly crm: CrmRegistrationQueue,
  ) {}

  /**
   * Company, owner user (`pending`), contact, the admins' `company.registered` notifications
   * and the company's CRM outbox row in one transaction; then the verification e-mail.
   */
  async register(dto: RegisterDto): Promise<RegisteredDto> {
    if (await this.members.emailTaken(dto.email)) {
      throw new ConflictError('Email is already registered');
    }
    const passwordHash = await this.passwords.hash(dto.password);
    const owner = await this.transactions.run(async (em) => {
      const company = await em.save(
        em.create(Company, {
          name: dto.companyName,
          phone: dto.phone ?? null,
          relayUsername: newRelayUsername(),
        }),
      );
      const created = await this.members.createOwner(em, {
        companyId: company.id,
        email: dto.email,
        passwordHash,
        fullName: dto.fullName,
        phone: dto.phone ?? null,
      });
      await this.notifications.notifyAdmins(
        ['superAdmin', 'admin'],
        {
          type: 'company.registered',
          title: `New company: ${company.name}`,
          body: `${company.name} signed up (${dto.email}).`,
          data: { companyUuid: company.uuid },
        },
        em,
      );
      await this.crm.queueNewCompany(em, company);
      return Object.assign(created, { company });
    });
    await this.users.sendVerificationMail(owner);
    return {
      user: UserDto.from(owner, owner.company.uuid, owner.contact.uuid),
      company: CompanySummaryDto.from(owner.company),
    };
  }
}

/** `r-` and 8 lower-case base-36 characters, e.g. `r-7f3k2q9d`. */
function newRelayUsername(): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(8);
  let name = 'r-';
  for (const b of bytes) name += alphabet[b % 36];
  return name;
}
