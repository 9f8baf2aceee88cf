import { Global, Module } from '@nestjs/common';
import { JobRegistry } from './job-registry';

@Global()
@Module({ providers: [JobRegistry], exports: [JobRegistry] })
export class JobsModule {}
