import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { AdminUpdateUserDto, ListUsersQueryDto } from './dto/user-admin-requests.dto';
import { AdminUserDto, AdminUserPageDto } from './dto/user-admin-response.dto';
import { UsersAdminService } from './users-admin.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/** auth.md: users read by every admin role, written by superAdmin and admin. */
@ApiTags('admin users')
@Controller('api/v1/admins/users')
export class UsersAdminController {
  constructor(private readonly users: UsersAdminService) {}

  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Users fetched')
  @ApiEnvelope(AdminUserPageDto)
  @ApiErrors(400)
  list(@Query() query: ListUsersQueryDto): Promise<Page<AdminUserDto>> {
    return this.users.list(query);
  }

  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('User fetched')
  @ApiEnvelope(AdminUserDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminUserDto> {
    return this.users.get(uuid);
  }

  @Patch(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('User updated')
  @ApiEnvelope(AdminUserDto)
  @ApiErrors(400, 404, 409)
  update(@Param('uuid', uuidPipe) uuid: string, @Body() dto: AdminUpdateUserDto): Promise<AdminUserDto> {
    return this.users.update(uuid, dto);
  }

  @Post(':uuid/resend-verification')
  @AdminRoles('superAdmin', 'admin')
  @HttpCode(200)
  @ResponseMessage('Verification e-mail sent')
  @ApiEnvelope()
  @ApiErrors(400, 404, 409)
  async resendVerification(@Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.users.resendVerification(uuid);
    return {};
  }
}
