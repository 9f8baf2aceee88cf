import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin } from '../auth/access.decorators';
import { BroadcastDto, ListNotificationsQueryDto } from './dto/notification-requests.dto';
import {
  BroadcastResultDto,
  NotificationDto,
  NotificationPageDto,
  ReadAllDto,
  UnreadCountDto,
} from './dto/notification-response.dto';
import { adminOwner, NotificationsService } from './notifications.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/**
 * The calling admin's own notifications (every role), and broadcasts to users. DELETE
 * `/:uuid` is not in endpoints.md's table; it is here for symmetry with the user routes.
 */
@ApiTags('admin notifications')
@Controller('api/v1/admins/notification')
export class NotificationsAdminController {
  constructor(private readonly notifications: NotificationsService) {}

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

  @Get('unread-count')
  @AdminRoles()
  @ResponseMessage('Unread notifications counted')
  @ApiEnvelope(UnreadCountDto)
  unreadCount(@CurrentAdmin() admin: Admin): Promise<UnreadCountDto> {
    return this.notifications.countUnread(adminOwner(admin));
  }

  @Patch('read-all')
  @AdminRoles()
  @ResponseMessage('All notifications marked read')
  @ApiEnvelope(ReadAllDto)
  readAll(@CurrentAdmin() admin: Admin): Promise<ReadAllDto> {
    return this.notifications.markAllRead(adminOwner(admin));
  }

  @Post('broadcast')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Broadcast sent')
  @ApiEnvelope(BroadcastResultDto, 201)
  @ApiErrors(400)
  broadcast(@Body() dto: BroadcastDto): Promise<BroadcastResultDto> {
    return this.notifications.broadcast(dto);
  }

  @Patch(':uuid/read')
  @AdminRoles()
  @ResponseMessage('Notification marked read')
  @ApiEnvelope(NotificationDto)
  @ApiErrors(400, 404)
  read(@CurrentAdmin() admin: Admin, @Param('uuid', uuidPipe) uuid: string): Promise<NotificationDto> {
    return this.notifications.markRead(adminOwner(admin), uuid);
  }

  @Delete(':uuid')
  @AdminRoles()
  @ResponseMessage('Notification deleted')
  @ApiEnvelope()
  @ApiErrors(400, 404)
  async remove(@CurrentAdmin() admin: Admin, @Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.notifications.remove(adminOwner(admin), uuid);
    return {};
  }
}
