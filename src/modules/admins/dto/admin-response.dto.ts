import { ApiProperty } from '@nestjs/swagger';
import { PageResponseDto } from '../../../common/pagination/page';
import { ADMIN_ROLE_NAMES, AdminRole, AdminRoleName } from '../entities/admin-role.entity';
import type { Admin } from '../entities/admin.entity';

export class AdminRoleDto {
  id: number;
  @ApiProperty({ enum: ADMIN_ROLE_NAMES }) name: AdminRoleName;

  static from(role: AdminRole): AdminRoleDto {
    return { id: role.id, name: role.name };
  }
}

export class AdminDto {
  uuid: string;
  email: string;
  fullName: string;
  role: AdminRoleDto;
  isActive: boolean;
  lastLoginAt: Date | null;
  createdAt: Date;

  static from(admin: Admin): AdminDto {
    return {
      uuid: admin.uuid,
      email: admin.email,
      fullName: admin.fullName,
      role: AdminRoleDto.from(admin.role),
      isActive: admin.isActive,
      lastLoginAt: admin.lastLoginAt,
      createdAt: admin.createdAt,
    };
  }
}

export class AdminLoginDto {
  accessToken: string;
  refreshToken: string;
  @ApiProperty({ enum: ['Bearer'] }) tokenType: 'Bearer';
  /** Access-token lifetime in seconds. */
  expiresIn: number;
  admin: AdminDto;
}

export class AdminPageDto extends PageResponseDto {
  @ApiProperty({ type: [AdminDto] }) items: AdminDto[];
}

export class AdminRoleListDto {
  @ApiProperty({ type: [AdminRoleDto] }) items: AdminRoleDto[];
}
