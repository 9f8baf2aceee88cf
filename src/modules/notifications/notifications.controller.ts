import { Controller, Delete, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, UserAuth } from '../auth/access.decorators';
import { User } from '../users/entities/user.entity';
import { ListNotificationsQueryDto } from './dto/notification-requests.dto';
import {
  NotificationDto,
  NotificationPageDto,
  ReadAllDto,
  UnreadCountDto,
} from './dto/notification-response.dto';
import { NotificationsService, userOwner } from './notifications.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/** The calling user's own notifications. Static paths come before the `/:uuid` ones. */
@ApiTags('notifications')
@Controller('api/v1/users/notification')
@UserAuth()
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
  @ResponseMessage('Notifications fetched')
  @ApiEnvelope(NotificationPageDto)
  @ApiErrors(400)
  list(@CurrentUser() user: User, @Query() query: ListNotificationsQueryDto): Promise<Page<NotificationDto>> {
    return this.notifications.list(userOwner(user), query);
  }

  @Get('unread-count')
  @ResponseMessage('Unread notifications counted')
  @ApiEnvelope(UnreadCountDto)
  unreadCount(@CurrentUser() user: User): Promise<UnreadCountDto> {
    return this.notifications.countUnread(userOwner(user));
  }

  @Patch('read-all')
  @ResponseMessage('All notifications marked read')
  @ApiEnvelope(ReadAllDto)
  readAll(@CurrentUser() user: User): Promise<ReadAllDto> {
    return this.notifications.markAllRead(userOwner(user));
  }

  @Patch(':uuid/read')
  @ResponseMessage('Notification marked read')
  @ApiEnvelope(NotificationDto)
  @ApiErrors(400, 404)
  read(@CurrentUser() user: User, @Param('uuid', uuidPipe) uuid: string): Promise<NotificationDto> {
    return this.notifications.markRead(userOwner(user), uuid);
  }

  @Delete(':uuid')
  @ResponseMessage('Notification deleted')
  @ApiEnvelope()
  @ApiErrors(400, 404)
  async remove(@CurrentUser() user: User, @Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.notifications.remove(userOwner(user), uuid);
    return {};
  }
}
