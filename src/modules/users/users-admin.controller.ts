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

  /**
   * List customer users across companies.
   *
   * @remarks
   * Every admin role. Paged, filtered by `status`, `companyUuid` and a free-text `search`.
   */
  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Users fetched')
  @ApiEnvelope(AdminUserPageDto)
  @ApiErrors(400)
  list(@Query() query: ListUsersQueryDto): Promise<Page<AdminUserDto>> {
    return this.users.list(query);
  }

  /**
   * Read one customer user with the company.
   *
   * @remarks
   * Every admin role. The user with the contact, status, e-mail verification and last login, and a summary of
   * the company. 404 when no user has this uuid; 400 for a malformed uuid.
   */
  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('User fetched')
  @ApiEnvelope(AdminUserDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminUserDto> {
    return this.users.get(uuid);
  }

  /**
   * Suspend or reactivate a customer user.
   *
   * @remarks
   * superAdmin and admin (accounting reads only). `suspended` blocks the user's login, refresh and access
   * tokens at once; `active` reactivates a suspended user. A user who never verified the e-mail address
   * cannot be made active this way (409): verification or the invitation is the only way out of `pending`.
   * 404 when no user has this uuid.
   */
  @Patch(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('User updated')
  @ApiEnvelope(AdminUserDto)
  @ApiErrors(400, 404, 409)
  update(@Param('uuid', uuidPipe) uuid: string, @Body() dto: AdminUpdateUserDto): Promise<AdminUserDto> {
    return this.users.update(uuid, dto);
  }

  /**
   * Send a user's verification e-mail again.
   *
   * @remarks
   * superAdmin and admin. Sends the verification e-mail, or the invitation again for an invited member who
   * has no password yet. 409 when the address is already verified; 404 when no user has this uuid.
   */
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
