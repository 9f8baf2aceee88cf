import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Notification } from './entities/notification.entity';
import { NotificationRecipients } from './notification-recipients';
import { NotificationsAdminController } from './notifications-admin.controller';
import { NotificationsController } from './notifications.controller';
import { NotificationInbox } from './notification-inbox.service';
import { Notifier } from './notifier';

/**
 * Global: every area raises notifications for its own events. The users, admins and companies
 * areas register on NotificationRecipients who the notifications go to.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Notification])],
  controllers: [NotificationsController, NotificationsAdminController],
  providers: [NotificationRecipients, Notifier, NotificationInbox],
  exports: [NotificationRecipients, Notifier],
})
export class NotificationsModule {}
