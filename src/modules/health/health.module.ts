import { Module } from '@nestjs/common';
import { LogIndexModule } from '../log-index/log-index.module';
import { HealthController } from './health.controller';

@Module({ imports: [LogIndexModule], controllers: [HealthController] })
export class HealthModule {}
