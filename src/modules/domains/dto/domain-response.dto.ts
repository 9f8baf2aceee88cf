import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import {
  DnsRecord,
  Domain,
  DOMAIN_STATUSES,
  type DomainStatus,
  RECORD_PURPOSES,
  RECORD_STATUSES,
  type RecordPurpose,
  type RecordStatus,
} from '../entities/domain.entity';

export class DnsRecordDto implements DnsRecord {
  @ApiProperty({ enum: RECORD_PURPOSES }) purpose: RecordPurpose;
  @ApiProperty({ enum: ['TXT', 'CNAME'] }) type: 'TXT' | 'CNAME';
  /** Fully qualified host name to publish the record at. */
  host: string;
  /** What to publish. */
  value: string;
  /** Needed for verification (ownership, SPF, DKIM); DMARC and the return path are recommended. */
  required: boolean;
  @ApiProperty({ enum: RECORD_STATUSES }) status: RecordStatus;
  /** Why the last check gave this status. */
  detail: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) checkedAt: string | null;
}

export class DomainDto {
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ format: 'uuid' }) companyUuid: string;
  /** Lower-case; an IDN as punycode. */
  name: string;
  @ApiProperty({ enum: DOMAIN_STATUSES }) status: DomainStatus;
  /** Published as the TXT value `relay-verification=<token>`. */
  verificationToken: string;
  /** The DKIM selector, e.g. `rs202611`. */
  selector: string;
  /** The DKIM public key (base64 DER), as published in `p=`. */
  dkimPublicKey: string;
  @ApiProperty({ type: [DnsRecordDto] }) records: DnsRecordDto[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastCheckedAt: Date | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) verifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;

  /** `domain` must come with its company (for the uuid). */
  static from(domain: Domain): DomainDto {
    return {
      uuid: domain.uuid,
      companyUuid: domain.company.uuid,
      name: domain.name,
      status: domain.status,
      verificationToken: domain.verificationToken,
      selector: domain.dkimSelector,
      dkimPublicKey: domain.dkimPublicKey,
      records: domain.records,
      lastCheckedAt: domain.lastCheckedAt,
      verifiedAt: domain.verifiedAt,
      createdAt: domain.createdAt,
      updatedAt: domain.updatedAt,
    };
  }
}

export class DomainPageDto extends PageResponseDto {
  @ApiProperty({ type: [DomainDto] }) items: DomainDto[];
}
