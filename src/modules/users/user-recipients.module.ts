import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from './entities/user.entity';
import { UserRecipientSource } from './user-recipients';

/**
 * The users table read for the notifications area, which UsersModule imports (so it cannot
 * import UsersModule back). It imports nothing of another area.
 */
@Module({
  imports: [TypeOrmModule.forFeature([User])],
  providers: [UserRecipientSource],
  exports: [UserRecipientSource],
})
export class UserRecipientsModule {}
