import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { Omittable } from '../../../common/validation/presence';
import { DOMAIN_STATUSES, DomainStatus } from '../entities/domain.entity';

export class AddDomainDto {
  /** A domain name such as `acme.co.id` or `mail.acme.co.id`: no scheme, no path; IDN accepted (stored as punycode). */
  @IsString()
  @MaxLength(300)
  name: string;
}

export class ListDomainsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DOMAIN_STATUSES })
  @Omittable()
  @IsIn(DOMAIN_STATUSES)
  status?: DomainStatus;
}

export class AdminListDomainsQueryDto extends ListDomainsQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @Omittable()
  @IsUUID()
  companyUuid?: string;

  /** Part of the domain name, case-insensitive. */
  @Omittable()
  @IsString()
  @MaxLength(253)
  search?: string;
}
