import { Module } from '@nestjs/common';
import { JobRegistryModule } from './job-registry.module';
import { JobsAdminController } from './jobs-admin.controller';
import { JobsService } from './jobs.service';

/** Schedules the registered jobs, one replica at a time, and runs them on demand (`GET /api/v1/t3st-job`). */
@Module({
  imports: [JobRegistryModule],
  controllers: [JobsAdminController],
  providers: [JobsService],
  exports: [JobsService],
})
export class JobsModule {}
