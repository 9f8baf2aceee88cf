import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import type { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin } from '../auth/access.decorators';
import { OwnedEntity } from '../auth/guards/company-ownership.guard';
import { BroadcastDto, ListNotificationsQueryDto } from './dto/notification-requests.dto';
import {
  BroadcastResultDto,
  NotificationDto,
  NotificationPageDto,
  ReadAllDto,
  UnreadCountDto,
} from './dto/notification-response.dto';
import { Notification } from './entities/notification.entity';
import { OwnedNotification } from './owned-notification.decorator';
import { adminOwner, NotificationInbox } from './notification-inbox.service';

/**
 * The calling admin's own notifications (every role), and broadcasts to users. DELETE
 * `/:uuid` is not in endpoints.md's table; it is here for symmetry with the user routes.
 */
@ApiTags('admin notifications')
@Controller('api/v1/admins/notification')
export class NotificationsAdminController {
  constructor(private readonly notifications: NotificationInbox) {}

  /**
   * List the signed-in admin's notifications.
   *
   * @remarks
   * Any admin role. Newest first, paged; `unread=true` keeps the unread ones and `type` one kind.
   */
  @Get()
  @AdminRoles()
  @ResponseMessage('Notifications fetched')
  @ApiEnvelope(NotificationPageDto)
  @ApiErrors(400)
  list(
    @CurrentAdmin() admin: Admin,
    @Query() query: ListNotificationsQueryDto,
  ): Promise<Page<NotificationDto>> {
    return this.notifications.list(adminOwner(admin), query);
  }

  /**
   * Count the signed-in admin's unread notifications.
   *
   * @remarks
   * Any admin role. Returns how many of the admin's notifications are not read yet (`count`), for a badge.
   */
  @Get('unread-count')
  @AdminRoles()
  @ResponseMessage('Unread notifications counted')
  @ApiEnvelope(UnreadCountDto)
  unreadCount(@CurrentAdmin() admin: Admin): Promise<UnreadCountDto> {
    return this.notifications.unreadCount(adminOwner(admin));
  }

  /**
   * Mark every notification of the signed-in admin read.
   *
   * @remarks
   * Any admin role. Marks every unread notification of the admin read, and returns how many were `updated`.
   */
  @Patch('read-all')
  @AdminRoles()
  @ResponseMessage('All notifications marked read')
  @ApiEnvelope(ReadAllDto)
  readAll(@CurrentAdmin() admin: Admin): Promise<ReadAllDto> {
    return this.notifications.markAllRead(adminOwner(admin));
  }

  /**
   * Broadcast a notification to the users of companies.
   *
   * @remarks
   * superAdmin and admin. Sends `title` and `body` to the users of the companies listed in `companyUuids`, or
   * of every active company when none is listed; with `email` it is e-mailed as well. Answers 201 with the
   * number of `recipients`. 400 when a listed company does not exist.
   */
  @Post('broadcast')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Broadcast sent')
  @ApiEnvelope(BroadcastResultDto, 201)
  @ApiErrors(400)
  broadcast(@Body() dto: BroadcastDto): Promise<BroadcastResultDto> {
    return this.notifications.broadcast(dto);
  }

  /**
   * Mark one notification read.
   *
   * @remarks
   * Any admin role, for a notification of their own: another admin's, or an unknown uuid, is a 404. Returns
   * the notification.
   */
  @Patch(':uuid/read')
  @AdminRoles()
  @OwnedNotification()
  @ResponseMessage('Notification marked read')
  @ApiEnvelope(NotificationDto)
  read(@CurrentAdmin() admin: Admin, @OwnedEntity() notification: Notification): Promise<NotificationDto> {
    return this.notifications.markRead(adminOwner(admin), notification);
  }

  /**
   * Delete one notification.
   *
   * @remarks
   * Any admin role, for a notification of their own: another admin's, or an unknown uuid, is a 404.
   */
  @Delete(':uuid')
  @AdminRoles()
  @OwnedNotification()
  @ResponseMessage('Notification deleted')
  @ApiEnvelope()
  async remove(@OwnedEntity() notification: Notification): Promise<object> {
    await this.notifications.remove(notification);
    return {};
  }
}
