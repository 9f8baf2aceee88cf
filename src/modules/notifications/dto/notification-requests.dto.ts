import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsString,
  IsUUID,
  MaxLength,
} from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { QueryBoolean } from '../../../common/validation/query-transforms';
import { NOTIFICATION_TYPES, NotificationType } from '../entities/notification.entity';
import { Omittable } from '../../../common/validation/presence';

/** Entity property paths of the sortable fields. */
export const NOTIFICATION_SORT_FIELDS = { createdAt: 'notification.createdAt' } as const;

export class ListNotificationsQueryDto extends PageQueryDto {
  /** `true`: only unread notifications; `false`: only read ones; absent: all. */
  @Omittable()
  @QueryBoolean()
  @IsBoolean()
  unread?: boolean;

  @ApiPropertyOptional({ enum: NOTIFICATION_TYPES })
  @Omittable()
  @IsIn(NOTIFICATION_TYPES)
  type?: NotificationType;

  /** `createdAt:asc|desc`. Default `createdAt:desc` (newest first). */
  @Omittable()
  @IsString()
  @MaxLength(40)
  sort?: string;
}

/** The most companies one broadcast may name; more is a broadcast to all. */
export const BROADCAST_MAX_COMPANIES = 1000;

export class BroadcastDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  title: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(5000)
  body: string;

  /** The companies whose active users receive it; absent = every active company. */
  @Omittable()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(BROADCAST_MAX_COMPANIES)
  @ArrayUnique()
  @IsUUID('all', { each: true })
  companyUuids?: string[];

  /** Also e-mail it to each recipient (sent after the response). */
  @Omittable()
  @IsBoolean()
  email?: boolean;
}
