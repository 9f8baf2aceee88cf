import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import type { Package } from '../entities/package.entity';

/** A package as customers see it. */
export class PackageDto {
  uuid: string;
  name: string;
  description: string | null;
  /** Messages per period. */
  quota: number;
  /** Integer minor units of `currency`. */
  price: number;
  currency: string;
  durationDays: number;
  isPublic: boolean;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;

  static from(p: Package): PackageDto {
    return {
      uuid: p.uuid,
      name: p.name,
      description: p.description,
      quota: p.quota,
      price: p.price,
      currency: p.currency,
      durationDays: p.durationDays,
      isPublic: p.isPublic,
      isActive: p.isActive,
      createdAt: p.createdAt,
      updatedAt: p.updatedAt,
    };
  }
}

/** A package as admins see it: with the number of companies whose subscription is this package. */
export class AdminPackageDto extends PackageDto {
  companiesCount: number;

  static withCount(p: Package, companiesCount: number): AdminPackageDto {
    return { ...PackageDto.from(p), companiesCount };
  }
}

export class AdminPackagePageDto extends PageResponseDto {
  @ApiProperty({ type: [AdminPackageDto] }) items: AdminPackageDto[];
}

export class PackageListDto extends PageResponseDto {
  @ApiProperty({ type: [PackageDto] }) items: PackageDto[];
}

/** What DELETE did: removed the row, or archived a package in use (isActive = false). */
export class PackageDeletedDto {
  deleted: boolean;
  archived: boolean;
}
