import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminRecipientsModule } from '../admins/admin-recipients.module';
import { CompanyRelayModule } from '../companies/company-relay.module';
import { MailModule } from '../mail/mail.module';
import { UserRecipientsModule } from '../users/user-recipients.module';
import { Notification } from './entities/notification.entity';
import { NotificationsAdminController } from './notifications-admin.controller';
import { NotificationsController } from './notifications.controller';
import { NotificationInbox } from './notification-inbox.service';
import { Notifier } from './notifier';

/**
 * Imported by every area that raises notifications for its own events. The recipients come from
 * the small read modules of the users, admins and companies areas, which import nothing back.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([Notification]),
    MailModule,
    UserRecipientsModule,
    AdminRecipientsModule,
    CompanyRelayModule,
  ],
  controllers: [NotificationsController, NotificationsAdminController],
  providers: [Notifier, NotificationInbox],
  exports: [Notifier],
})
export class NotificationsModule {}
