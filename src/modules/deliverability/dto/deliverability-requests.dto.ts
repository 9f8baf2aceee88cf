import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, MaxLength } from 'class-validator';
import { Omittable } from '../../../common/validation/presence';
import { ReportWindowQueryDto } from '../../reports/dto/report-requests.dto';
import { MAILBOX_PROVIDERS, type MailboxProvider } from '../mailbox-providers';
import { ALERT_STATES, type AlertState } from '../entities/deliverability-alert.entity';

export class ProvidersQueryDto extends ReportWindowQueryDto {
  /** Only messages from this sender domain. */
  @Omittable()
  @IsString()
  @MaxLength(255)
  domain?: string;
}

export class BounceCategoriesQueryDto extends ProvidersQueryDto {
  @ApiPropertyOptional({ enum: MAILBOX_PROVIDERS })
  @Omittable()
  @IsIn(MAILBOX_PROVIDERS)
  provider?: MailboxProvider;
}

export class AlertsQueryDto {
  @ApiPropertyOptional({ enum: ALERT_STATES })
  @Omittable()
  @IsIn(ALERT_STATES)
  state?: AlertState;
}

export class AdminProvidersQueryDto extends ProvidersQueryDto {
  /** One company; none = every company. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;
}

export class AdminBounceCategoriesQueryDto extends BounceCategoriesQueryDto {
  /** One company; none = every company. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;
}

export class AdminAlertsQueryDto extends AlertsQueryDto {
  /** One company; none = every company. */
  @Omittable()
  @IsUUID()
  companyUuid?: string;
}
