import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobRegistry } from './job-registry';

/** Global: the registry of the @Job methods (also in contexts that do not schedule them, like the CLI). */
@Global()
@Module({ imports: [DiscoveryModule], providers: [JobRegistry], exports: [JobRegistry] })
export class JobRegistryModule {}
