import { IsEmail, IsNumber, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { NormalizeEmail } from '../../../common/validation/query-transforms';
import { Omittable } from '../../../common/validation/presence';

/** At least one of `relayUsername`, `companyUuid`, `sender` names the company. */
export class SpamReportDto {
  /** The SASL username the message was relayed with. */
  @Omittable()
  @IsString()
  @MaxLength(64)
  relayUsername?: string;

  @Omittable()
  @IsUUID()
  companyUuid?: string;

  /** The envelope sender; names the company through its verified sender domain. */
  @Omittable()
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(320)
  sender?: string;

  /** With it, the same report sent again counts once. */
  @Omittable()
  @IsString()
  @MaxLength(998)
  messageId?: string;

  /** The address that complained; it is added to the company's suppression list. */
  @Omittable()
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(320)
  recipient?: string;

  @Omittable()
  @IsString()
  @MaxLength(500)
  reason?: string;

  /** The reporting system's spam score. */
  @Omittable()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-1_000_000)
  @Max(1_000_000)
  score?: number;
}

export class SpamReportResultDto {
  reportUuid: string;
  /** True when the company is suspended after this report (by it, or before it). */
  companySuspended: boolean;
}
