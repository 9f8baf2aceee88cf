import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { AdminsController } from './admins.controller';
import { AdminsService } from './admins.service';
import { AdminRole } from './entities/admin-role.entity';
import { Admin } from './entities/admin.entity';
import { FirstAdminBootstrap } from './first-admin.bootstrap';
import { NotificationsModule } from '../notifications/notifications.module';

@Module({
  imports: [TypeOrmModule.forFeature([Admin, AdminRole]), AuthModule, NotificationsModule],
  controllers: [AdminsController],
  providers: [AdminsService, FirstAdminBootstrap],
  exports: [AdminsService],
})
export class AdminsModule {}
