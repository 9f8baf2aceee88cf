import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminRecipientSource } from './admin-recipients';
import { Admin } from './entities/admin.entity';

/**
 * The admins table read for the notifications area, which AdminsModule imports (so it cannot
 * import AdminsModule back). It imports nothing of another area.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Admin])],
  providers: [AdminRecipientSource],
  exports: [AdminRecipientSource],
})
export class AdminRecipientsModule {}
