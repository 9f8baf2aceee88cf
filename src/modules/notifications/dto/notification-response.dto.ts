import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { Notification, NOTIFICATION_TYPES, NotificationType } from '../entities/notification.entity';

export class NotificationDto {
  uuid: string;
  @ApiProperty({ enum: NOTIFICATION_TYPES }) type: NotificationType;
  title: string;
  body: string;
  /** Small JSON with links to the resource, e.g. `{ billingUuid }`. */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  data: Record<string, unknown> | null;
  /** The recipient: a user's uuid (user notifications) or null. */
  userUuid: string | null;
  /** The recipient: an admin's uuid (admin notifications) or null. */
  adminUuid: string | null;
  readAt: Date | null;
  createdAt: Date;

  static from(n: Notification, recipient: { userUuid?: string; adminUuid?: string }): NotificationDto {
    return {
      uuid: n.uuid,
      type: n.type,
      title: n.title,
      body: n.body,
      data: n.data,
      userUuid: recipient.userUuid ?? null,
      adminUuid: recipient.adminUuid ?? null,
      readAt: n.readAt,
      createdAt: n.createdAt,
    };
  }
}

export class NotificationPageDto extends PageResponseDto {
  @ApiProperty({ type: [NotificationDto] }) items: NotificationDto[];
}

export class UnreadCountDto {
  count: number;
}

export class ReadAllDto {
  /** How many notifications were unread and are now read. */
  updated: number;
}

export class BroadcastResultDto {
  /** How many notifications were written (one per recipient). */
  recipients: number;
}
