import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Admin } from '../admins/entities/admin.entity';
import { User } from '../users/entities/user.entity';
import { Notification } from './entities/notification.entity';
import { NotificationsService } from './notifications.service';

/** Global: every area raises notifications for its own events. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Notification, User, Admin])],
  providers: [NotificationsService],
  exports: [NotificationsService],
})
export class NotificationsModule {}
