import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { ContactDto, UserDto } from '../../users/dto/user-response.dto';
import type { User } from '../../users/entities/user.entity';
import {
  Company,
  COMPANY_STATUSES,
  CompanyStatus,
  MAILBOX_SUITES,
  MailboxSuite,
} from '../entities/company.entity';
import { deriveRelayStatus, RELAY_STATUSES, RelayStatus } from '../relay-status';

/** The subscription of resources.md: all null / 0 for a company that never paid. */
export class SubscriptionDto {
  packageUuid: string | null;
  packageName: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  quota: number;
  used: number;
  remaining: number;

  static from(company: Company, packageName: string | null): SubscriptionDto {
    if (!company.packageUuid) {
      return {
        packageUuid: null,
        packageName: null,
        periodStart: null,
        periodEnd: null,
        quota: 0,
        used: 0,
        remaining: 0,
      };
    }
    return {
      packageUuid: company.packageUuid,
      packageName,
      periodStart: company.periodStart,
      periodEnd: company.periodEnd,
      quota: company.quota,
      used: company.used,
      remaining: Math.max(0, company.quota - company.used),
    };
  }
}

/** A company as its users see it (and as admins see it, inside the admin detail). */
export class CompanyDto {
  uuid: string;
  name: string;
  legalName: string | null;
  taxId: string | null;
  address: string | null;
  city: string | null;
  /** ISO 3166-1 alpha-2. */
  country: string;
  phone: string | null;
  website: string | null;
  @ApiProperty({ enum: COMPANY_STATUSES }) status: CompanyStatus;
  suspendedReason: string | null;
  relayUsername: string;
  @ApiProperty({ enum: RELAY_STATUSES }) relayStatus: RelayStatus;
  @ApiProperty({ enum: MAILBOX_SUITES }) mailboxSuite: MailboxSuite;
  /** IPs / CIDRs that may relay without SMTP authentication. */
  allowedIps: string[];
  subscription: SubscriptionDto;
  createdAt: Date;

  static from(company: Company, packageName: string | null): CompanyDto {
    return {
      uuid: company.uuid,
      name: company.name,
      legalName: company.legalName,
      taxId: company.taxId,
      address: company.address,
      city: company.city,
      country: company.country,
      phone: company.phone,
      website: company.website,
      status: company.status,
      suspendedReason: company.suspendedReason,
      relayUsername: company.relayUsername,
      relayStatus: deriveRelayStatus(company),
      mailboxSuite: company.mailboxSuite,
      allowedIps: company.allowedIps ?? [],
      subscription: SubscriptionDto.from(company, packageName),
      createdAt: company.createdAt,
    };
  }
}

export class DailyUsageDto {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  count: number;
}

export class UsageDto {
  quota: number;
  used: number;
  remaining: number;
  periodStart: Date | null;
  periodEnd: Date | null;
  /** One entry per UTC day of the range, oldest first (days without mail count 0). */
  @ApiProperty({ type: [DailyUsageDto] }) daily: DailyUsageDto[];
}

/** The relay credentials; the password is shown this once and stored only as an argon2 hash. */
export class RelayCredentialsDto {
  relayUsername: string;
  relayPassword: string;
}

export class AllowedIpsResultDto {
  ips: string[];
}

/** A user of the company with its contact. */
export class MemberDto extends UserDto {
  contact: ContactDto;

  /** `user` must come with its contact loaded. */
  static fromMember(user: User, companyUuid: string): MemberDto {
    return {
      ...UserDto.from(user, companyUuid, user.contact.uuid),
      contact: ContactDto.from(user.contact),
    };
  }
}

export class MemberPageDto extends PageResponseDto {
  @ApiProperty({ type: [MemberDto] }) items: MemberDto[];
}
