import { Module } from '@nestjs/common';
import { LogIndexModule } from '../log-index/log-index.module';
import { HealthController } from './health.controller';
import { MailModule } from '../mail/mail.module';

@Module({ imports: [LogIndexModule, MailModule], controllers: [HealthController] })
export class HealthModule {}
