import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { CompanyMembersService } from './company-members.service';
import { Contact } from './entities/contact.entity';
import { User } from './entities/user.entity';
import { UsersAdminController } from './users-admin.controller';
import { UsersAdminService } from './users-admin.service';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';
import { MailModule } from '../mail/mail.module';
import { NotificationsModule } from '../notifications/notifications.module';

@Module({
  imports: [TypeOrmModule.forFeature([User, Contact]), AuthModule, MailModule, NotificationsModule],
  controllers: [UsersController, UsersAdminController],
  providers: [UsersService, UsersAdminService, CompanyMembersService],
  exports: [UsersService, CompanyMembersService],
})
export class UsersModule {}
