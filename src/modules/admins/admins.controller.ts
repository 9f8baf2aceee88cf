import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles, CurrentAdmin, Public } from '../auth/access.decorators';
import { CredentialsService } from '../auth/credentials.service';
import { ChangePasswordDto, EmailDto, LoginDto, ResetPasswordDto } from '../users/dto/user-requests.dto';
import { AdminsService } from './admins.service';
import {
  CreateAdminDto,
  ListAdminsQueryDto,
  UpdateAdminDto,
  UpdateAdminMeDto,
} from './dto/admin-requests.dto';
import {
  AdminDto,
  AdminLoginDto,
  AdminPageDto,
  AdminRoleDto,
  AdminRoleListDto,
} from './dto/admin-response.dto';
import { Admin } from './entities/admin.entity';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

@ApiTags('admins')
@Controller('api/v1/admins')
export class AdminsController {
  constructor(
    private readonly admins: AdminsService,
    private readonly credentials: CredentialsService,
  ) {}

  /**
   * Log an admin in.
   *
   * @remarks
   * Public; rate limited per IP and e-mail address (LOGIN_RATE_LIMIT_PER_MINUTE) on top of the per-IP limit.
   * Returns an access token, a refresh token and the admin (uuid, e-mail address, name, role, active flag,
   * last login). 401 for a wrong e-mail address or password (the same answer for both); 403 when the admin is
   * deactivated.
   */
  @Post('login')
  @Public()
  @HttpCode(200)
  @RateLimit('login')
  @ResponseMessage('Login successful')
  @ApiEnvelope(AdminLoginDto)
  @ApiErrors(400, 401, 403, 429)
  async login(@Body() dto: LoginDto): Promise<AdminLoginDto> {
    const { subject: admin, ...tokens } = await this.credentials.login('admin', dto.email, dto.password);
    return { ...tokens, admin: AdminDto.from(admin) };
  }

  /**
   * Request an admin password reset e-mail.
   *
   * @remarks
   * Public; rate limited per e-mail address (EMAIL_RATE_LIMIT_PER_HOUR) on top of the per-IP limit. Always
   * answers 200 with an empty object, whether or not the address belongs to an admin. The e-mail links to the
   * admin front end with a reset token valid for 1 day.
   */
  @Post('forgot-password')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an admin, a reset e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async forgotPassword(@Body() dto: EmailDto): Promise<object> {
    await this.credentials.forgotPassword('admin', dto.email);
    return {};
  }

  /**
   * Set a new admin password with the token of the reset e-mail.
   *
   * @remarks
   * Public: the reset token is the credential. It is single-use: once the password has changed it is refused
   * (401), as is an invalid or expired one. Every refresh token of the admin issued before the reset stops
   * working.
   */
  @Post('reset-password')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Password has been reset')
  @ApiEnvelope()
  @ApiErrors(400, 401, 429)
  async resetPassword(@Body() dto: ResetPasswordDto): Promise<object> {
    await this.credentials.resetPassword('admin', dto.token, dto.password);
    return {};
  }

  /**
   * Read the signed-in admin's profile.
   *
   * @remarks
   * Any admin role. The role is the one stored now, not the one of the token. 401 for a missing, invalid or
   * expired access token, or an account suspended, deactivated or deleted since it was issued. 403 for a user
   * token.
   */
  @Get('me')
  @AdminRoles()
  @ResponseMessage('Profile fetched')
  @ApiEnvelope(AdminDto)
  me(@CurrentAdmin() admin: Admin): AdminDto {
    return AdminDto.from(admin);
  }

  /**
   * Change the signed-in admin's name.
   *
   * @remarks
   * Any admin role. Only `fullName` can be changed here: the role and the active flag are a superAdmin's
   * business (PATCH /api/v1/admins/uuid). 400 for an invalid or unknown field.
   */
  @Patch('me')
  @AdminRoles()
  @ResponseMessage('Profile updated')
  @ApiEnvelope(AdminDto)
  @ApiErrors(400)
  updateMe(@CurrentAdmin() admin: Admin, @Body() dto: UpdateAdminMeDto): Promise<AdminDto> {
    return this.admins.updateMe(admin, dto);
  }

  /**
   * Change the signed-in admin's password.
   *
   * @remarks
   * Any admin role. Needs the current password (400 when it is wrong); the new one is 10 to 128 characters.
   * Every refresh token of the admin issued before the change stops working. 409 when another request changed
   * the password meanwhile: try again.
   */
  @Put('me/password')
  @AdminRoles()
  @ResponseMessage('Password changed')
  @ApiEnvelope()
  @ApiErrors(400)
  async changePassword(@CurrentAdmin() admin: Admin, @Body() dto: ChangePasswordDto): Promise<object> {
    await this.credentials.changePassword('admin', admin.id, dto.currentPassword, dto.newPassword);
    return {};
  }

  /**
   * List the admin roles.
   *
   * @remarks
   * superAdmin only. The roles superAdmin, admin and accounting with their ids: the values of `roleName` when
   * admins are created or changed.
   */
  @Get('roles')
  @AdminRoles('superAdmin')
  @ResponseMessage('Roles fetched')
  @ApiEnvelope(AdminRoleListDto)
  roles(): Promise<{ items: AdminRoleDto[] }> {
    return this.admins.listRoles();
  }

  /**
   * List admins.
   *
   * @remarks
   * superAdmin only. Paged (`page`, `limit`, `sort`), filtered by `roleName`, `isActive` and a free-text
   * `search`. 400 for a value out of range.
   */
  @Get()
  @AdminRoles('superAdmin')
  @ResponseMessage('Admins fetched')
  @ApiEnvelope(AdminPageDto)
  @ApiErrors(400)
  list(@Query() query: ListAdminsQueryDto): Promise<Page<AdminDto>> {
    return this.admins.list(query);
  }

  /**
   * Create an admin.
   *
   * @remarks
   * superAdmin only. Takes the e-mail address, the name, an initial password (10 to 128 characters) and the
   * role; answers 201 with the admin. 409 when the e-mail address is already used by an admin.
   */
  @Post()
  @AdminRoles('superAdmin')
  @ResponseMessage('Admin created')
  @ApiEnvelope(AdminDto, 201)
  @ApiErrors(400, 409)
  create(@Body() dto: CreateAdminDto): Promise<AdminDto> {
    return this.admins.create(dto);
  }

  /**
   * Read one admin.
   *
   * @remarks
   * superAdmin only. The admin with the role, the active flag and the last login. 404 when no admin has this
   * uuid; 400 for a malformed uuid.
   */
  @Get(':uuid')
  @AdminRoles('superAdmin')
  @ResponseMessage('Admin fetched')
  @ApiEnvelope(AdminDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminDto> {
    return this.admins.get(uuid);
  }

  /**
   * Change an admin's name, role or active flag.
   *
   * @remarks
   * superAdmin only. A deactivated admin's tokens are refused at once. 409 when an admin would deactivate or
   * demote itself, or when the last active superAdmin would be deactivated or demoted; 404 when no admin has
   * this uuid.
   */
  @Patch(':uuid')
  @AdminRoles('superAdmin')
  @ResponseMessage('Admin updated')
  @ApiEnvelope(AdminDto)
  @ApiErrors(400, 404, 409)
  update(
    @CurrentAdmin() actor: Admin,
    @Param('uuid', uuidPipe) uuid: string,
    @Body() dto: UpdateAdminDto,
  ): Promise<AdminDto> {
    return this.admins.update(actor, uuid, dto);
  }
}
