import { Module } from '@nestjs/common';
import { CompaniesModule } from '../companies/companies.module';
import { DomainsModule } from '../domains/domains.module';
import { MailboxSuitesController } from './mailbox-suites.controller';
import { MailboxSuitesService } from './mailbox-suites.service';
import { PublicScriptController } from './public-script.controller';

/** Mailbox suites (Microsoft 365, Google Workspace): the company's choice and its personalised setup script. */
@Module({
  imports: [CompaniesModule, DomainsModule],
  controllers: [MailboxSuitesController, PublicScriptController],
  providers: [MailboxSuitesService],
})
export class MailboxSuitesModule {}
