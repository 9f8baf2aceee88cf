import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { AdminsService } from './admins.service';

/** At start: the first superAdmin from ADMIN_EMAIL / ADMIN_PASSWORD, when no admin exists yet. */
@Injectable()
export class FirstAdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('FirstAdmin');

  constructor(
    private readonly config: AppConfig,
    private readonly admins: AdminsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { ADMIN_EMAIL: email, ADMIN_PASSWORD: password } = this.config.env;
    if (!email || !password) return;
    try {
      if (await this.admins.ensureFirstSuperAdmin(email, password))
        this.logger.log(`Created the first superAdmin ${email}`);
    } catch (e) {
      this.logger.error({ err: e }, 'Could not create the first superAdmin');
    }
  }
}
