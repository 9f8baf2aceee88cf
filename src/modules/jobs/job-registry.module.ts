import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobRegistry } from './job-registry';

/** The registry of the @Job methods (imported by the scheduler, and by contexts that do not schedule them, like the CLI). */
@Module({ imports: [DiscoveryModule], providers: [JobRegistry], exports: [JobRegistry] })
export class JobRegistryModule {}
