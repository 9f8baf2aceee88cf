import { Global, Module } from '@nestjs/common';
import { JobRegistry } from './job-registry';

/** Global: areas inject JobRegistry to register their jobs (also in contexts that do not schedule them, like the CLI). */
@Global()
@Module({ providers: [JobRegistry], exports: [JobRegistry] })
export class JobRegistryModule {}
