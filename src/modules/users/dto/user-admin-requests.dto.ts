import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { USER_STATUSES, UserStatus } from '../entities/user.entity';
import { Omittable } from '../../../common/validation/presence';

/** Entity property paths (not column names): TypeORM needs them to order a joined, paginated query. */
export const USER_SORT_FIELDS = {
  createdAt: 'u.createdAt',
  email: 'u.email',
  lastLoginAt: 'u.lastLoginAt',
} as const;

export class ListUsersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: USER_STATUSES })
  @Omittable()
  @IsIn(USER_STATUSES)
  status?: UserStatus;

  @Omittable()
  @IsUUID()
  companyUuid?: string;

  /** Matches the e-mail address or the contact's full name. */
  @Omittable()
  @IsString()
  @MaxLength(100)
  search?: string;

  /** `field:asc|desc`; fields: createdAt, email, lastLoginAt. Default `createdAt:desc`. */
  @Omittable()
  @IsString()
  @MaxLength(40)
  sort?: string;
}

export const ADMIN_SETTABLE_USER_STATUSES = ['active', 'suspended'] as const;

export class AdminUpdateUserDto {
  /** `suspended` blocks login and ends the user's tokens; `active` lifts it (e-mail verification still required). */
  @ApiPropertyOptional({ enum: ADMIN_SETTABLE_USER_STATUSES })
  @ValidateIf((o: AdminUpdateUserDto) => o.status !== undefined)
  @IsIn(ADMIN_SETTABLE_USER_STATUSES)
  status?: (typeof ADMIN_SETTABLE_USER_STATUSES)[number];
}
