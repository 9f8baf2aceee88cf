import { Controller, Delete, Get, Patch, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, UserAuth } from '../auth/access.decorators';
import { OwnedEntity } from '../auth/guards/company-ownership.guard';
import type { User } from '../users/entities/user.entity';
import { ListNotificationsQueryDto } from './dto/notification-requests.dto';
import {
  NotificationDto,
  NotificationPageDto,
  ReadAllDto,
  UnreadCountDto,
} from './dto/notification-response.dto';
import { Notification } from './entities/notification.entity';
import { OwnedNotification } from './owned-notification.decorator';
import { NotificationInbox, userOwner } from './notification-inbox.service';

/** The calling user's own notifications. Static paths come before the `/:uuid` ones. */
@ApiTags('notifications')
@Controller('api/v1/users/notification')
@UserAuth()
export class NotificationsController {
  constructor(private readonly notifications: NotificationInbox) {}

  /**
   * List the signed-in user's notifications.
   *
   * @remarks
   * Any active user. Newest first, paged; `unread=true` keeps the unread ones and `type` one kind.
   */
  @Get()
  @ResponseMessage('Notifications fetched')
  @ApiEnvelope(NotificationPageDto)
  @ApiErrors(400)
  list(@CurrentUser() user: User, @Query() query: ListNotificationsQueryDto): Promise<Page<NotificationDto>> {
    return this.notifications.list(userOwner(user), query);
  }

  /**
   * Count the signed-in user's unread notifications.
   *
   * @remarks
   * Any active user. Returns how many of the user's notifications are not read yet (`count`), for a badge.
   */
  @Get('unread-count')
  @ResponseMessage('Unread notifications counted')
  @ApiEnvelope(UnreadCountDto)
  unreadCount(@CurrentUser() user: User): Promise<UnreadCountDto> {
    return this.notifications.unreadCount(userOwner(user));
  }

  /**
   * Mark every notification of the signed-in user read.
   *
   * @remarks
   * Any active user. Marks every unread notification of the user read, and returns how many were `updated`.
   */
  @Patch('read-all')
  @ResponseMessage('All notifications marked read')
  @ApiEnvelope(ReadAllDto)
  readAll(@CurrentUser() user: User): Promise<ReadAllDto> {
    return this.notifications.markAllRead(userOwner(user));
  }

  /**
   * Mark one notification read.
   *
   * @remarks
   * Any active user, for a notification of their own: another user's, or an unknown uuid, is a 404. Returns
   * the notification.
   */
  @Patch(':uuid/read')
  @OwnedNotification()
  @ResponseMessage('Notification marked read')
  @ApiEnvelope(NotificationDto)
  read(@CurrentUser() user: User, @OwnedEntity() notification: Notification): Promise<NotificationDto> {
    return this.notifications.markRead(userOwner(user), notification);
  }

  /**
   * Delete one notification.
   *
   * @remarks
   * Any active user, for a notification of their own: another user's, or an unknown uuid, is a 404.
   */
  @Delete(':uuid')
  @OwnedNotification()
  @ResponseMessage('Notification deleted')
  @ApiEnvelope()
  async remove(@OwnedEntity() notification: Notification): Promise<object> {
    await this.notifications.remove(notification);
    return {};
  }
}
