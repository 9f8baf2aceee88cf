import { Module } from '@nestjs/common';

/** The relay's questions to the service: the relay decision. */
@Module({})
export class InternalModule {}
