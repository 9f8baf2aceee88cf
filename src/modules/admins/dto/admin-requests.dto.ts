import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsIn, IsNotEmpty, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { NormalizeEmail, QueryBoolean } from '../../../common/validation/query-transforms';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../users/dto/user-requests.dto';
import { ADMIN_ROLE_NAMES, AdminRoleName } from '../entities/admin-role.entity';
import { Omittable } from '../../../common/validation/presence';

export class CreateAdminDto {
  @NormalizeEmail()
  @IsEmail()
  @MaxLength(254)
  email: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName: string;

  @IsString()
  @MinLength(PASSWORD_MIN)
  @MaxLength(PASSWORD_MAX)
  password: string;

  @ApiProperty({ enum: ADMIN_ROLE_NAMES })
  @IsIn(ADMIN_ROLE_NAMES)
  roleName: AdminRoleName;
}

export class UpdateAdminDto {
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName?: string;

  @ApiPropertyOptional({ enum: ADMIN_ROLE_NAMES })
  @Omittable()
  @IsIn(ADMIN_ROLE_NAMES)
  roleName?: AdminRoleName;

  @Omittable()
  @IsBoolean()
  isActive?: boolean;
}

export class UpdateAdminMeDto {
  @Omittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  fullName?: string;
}

/** Entity property paths (not column names): TypeORM needs them to order a joined, paginated query. */
export const ADMIN_SORT_FIELDS = {
  createdAt: 'admin.createdAt',
  email: 'admin.email',
  fullName: 'admin.fullName',
} as const;

export class ListAdminsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ADMIN_ROLE_NAMES })
  @Omittable()
  @IsIn(ADMIN_ROLE_NAMES)
  roleName?: AdminRoleName;

  @Omittable()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;

  /** Matches e-mail or full name. */
  @Omittable()
  @IsString()
  @MaxLength(100)
  search?: string;

  /** `field:asc|desc`; fields: createdAt, email, fullName. Default `createdAt:desc`. */
  @Omittable()
  @IsString()
  @MaxLength(40)
  sort?: string;
}
