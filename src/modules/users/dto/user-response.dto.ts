import { ApiProperty } from '@nestjs/swagger';
import { type Company, COMPANY_STATUSES, type CompanyStatus } from '../../companies/entities/company.entity';
import { deriveRelayStatus, RELAY_STATUSES, RelayStatus } from '../../companies/relay-status';
import type { Contact } from '../entities/contact.entity';
import { COMPANY_ROLES, CompanyRole, User, USER_STATUSES, UserStatus } from '../entities/user.entity';

export class UserDto {
  uuid: string;
  email: string;
  @ApiProperty({ enum: USER_STATUSES }) status: UserStatus;
  /** Role in the company. */
  @ApiProperty({ enum: COMPANY_ROLES }) role: CompanyRole;
  emailVerifiedAt: Date | null;
  lastLoginAt: Date | null;
  companyUuid: string;
  contactUuid: string;
  createdAt: Date;

  static from(user: User, companyUuid: string, contactUuid: string): UserDto {
    return {
      uuid: user.uuid,
      email: user.email,
      status: user.status,
      role: user.companyRole,
      emailVerifiedAt: user.emailVerifiedAt,
      lastLoginAt: user.lastLoginAt,
      companyUuid,
      contactUuid,
      createdAt: user.createdAt,
    };
  }
}

export class ContactDto {
  uuid: string;
  fullName: string;
  phone: string | null;
  position: string | null;

  static from(contact: Contact): ContactDto {
    return {
      uuid: contact.uuid,
      fullName: contact.fullName,
      phone: contact.phone,
      position: contact.position,
    };
  }
}

export class CompanySummaryDto {
  uuid: string;
  name: string;
  @ApiProperty({ enum: COMPANY_STATUSES }) status: CompanyStatus;
  @ApiProperty({ enum: RELAY_STATUSES }) relayStatus: RelayStatus;

  static from(company: Company): CompanySummaryDto {
    return {
      uuid: company.uuid,
      name: company.name,
      status: company.status,
      relayStatus: deriveRelayStatus(company),
    };
  }
}

/** `GET /api/v1/users/me`. */
export class MeDto {
  user: UserDto;
  contact: ContactDto;
  company: CompanySummaryDto;

  /** `user` must come with its contact and company loaded. */
  static from(user: User): MeDto {
    return {
      user: UserDto.from(user, user.company.uuid, user.contact.uuid),
      contact: ContactDto.from(user.contact),
      company: CompanySummaryDto.from(user.company),
    };
  }
}

export class RegisteredDto {
  user: UserDto;
  company: CompanySummaryDto;
}

export class UserLoginDto extends MeDto {
  accessToken: string;
  refreshToken: string;
  @ApiProperty({ enum: ['Bearer'] }) tokenType: 'Bearer';
  /** Access-token lifetime in seconds. */
  expiresIn: number;
}

export class EmailVerifiedDto {
  @ApiProperty({ enum: [true] }) verified: true;
  /** True when the address had been verified before this request. */
  alreadyVerified: boolean;
}
