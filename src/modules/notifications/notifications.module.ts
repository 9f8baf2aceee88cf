import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MailModule } from '../mail/mail.module';
import { Notification } from './entities/notification.entity';
import { NotificationRecipients } from './notification-recipients';
import { NotificationsAdminController } from './notifications-admin.controller';
import { NotificationsController } from './notifications.controller';
import { NotificationInbox } from './notification-inbox.service';
import { Notifier } from './notifier';

/**
 * Imported by every area that raises notifications for its own events. The users, admins and
 * companies areas register on NotificationRecipients who the notifications go to.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Notification]), MailModule],
  controllers: [NotificationsController, NotificationsAdminController],
  providers: [NotificationRecipients, Notifier, NotificationInbox],
  exports: [NotificationRecipients, Notifier],
})
export class NotificationsModule {}
