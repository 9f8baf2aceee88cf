import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainLookupModule } from './domain-lookup';
import { DomainSigningKeys } from './domain-signing-keys';
import { Domain } from './entities/domain.entity';

/** DomainSigningKeys for the relay agent's milter (with the one DomainEvents of DomainLookupModule). */
@Module({
  imports: [TypeOrmModule.forFeature([Domain]), DomainLookupModule],
  providers: [DomainSigningKeys],
  exports: [DomainSigningKeys],
})
export class DomainSigningModule {}
