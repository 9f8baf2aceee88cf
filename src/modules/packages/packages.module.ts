import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Package } from './entities/package.entity';
import { PackagesAdminController } from './packages-admin.controller';
import { PackageReferences } from './package-references';
import { PackagesService } from './packages.service';

@Module({
  imports: [TypeOrmModule.forFeature([Package])],
  controllers: [PackagesAdminController],
  providers: [PackageReferences, PackagesService],
  exports: [PackageReferences, PackagesService],
})
export class PackagesModule {}
