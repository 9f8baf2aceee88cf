import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles, CurrentAdmin, Public } from '../auth/access.decorators';
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
  constructor(private readonly admins: AdminsService) {}

  @Post('login')
  @Public()
  @HttpCode(200)
  @RateLimit('login')
  @ResponseMessage('Login successful')
  @ApiEnvelope(AdminLoginDto)
  @ApiErrors(400, 401, 403, 429)
  login(@Body() dto: LoginDto): Promise<AdminLoginDto> {
    return this.admins.login(dto);
  }

  @Post('forgot-password')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an admin, a reset e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async forgotPassword(@Body() dto: EmailDto): Promise<object> {
    await this.admins.forgotPassword(dto.email);
    return {};
  }

  @Post('reset-password')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Password has been reset')
  @ApiEnvelope()
  @ApiErrors(400, 401, 429)
  async resetPassword(@Body() dto: ResetPasswordDto): Promise<object> {
    await this.admins.resetPassword(dto);
    return {};
  }

  @Get('me')
  @AdminRoles()
  @ResponseMessage('Profile fetched')
  @ApiEnvelope(AdminDto)
  me(@CurrentAdmin() admin: Admin): AdminDto {
    return AdminDto.from(admin);
  }

  @Patch('me')
  @AdminRoles()
  @ResponseMessage('Profile updated')
  @ApiEnvelope(AdminDto)
  @ApiErrors(400)
  updateMe(@CurrentAdmin() admin: Admin, @Body() dto: UpdateAdminMeDto): Promise<AdminDto> {
    return this.admins.updateMe(admin, dto);
  }

  @Put('me/password')
  @AdminRoles()
  @ResponseMessage('Password changed')
  @ApiEnvelope()
  @ApiErrors(400)
  async changePassword(@CurrentAdmin() admin: Admin, @Body() dto: ChangePasswordDto): Promise<object> {
    await this.admins.changePassword(admin, dto);
    return {};
  }

  @Get('roles')
  @AdminRoles('superAdmin')
  @ResponseMessage('Roles fetched')
  @ApiEnvelope(AdminRoleListDto)
  roles(): Promise<{ items: AdminRoleDto[] }> {
    return this.admins.listRoles();
  }

  @Get()
  @AdminRoles('superAdmin')
  @ResponseMessage('Admins fetched')
  @ApiEnvelope(AdminPageDto)
  @ApiErrors(400)
  list(@Query() query: ListAdminsQueryDto): Promise<Page<AdminDto>> {
    return this.admins.list(query);
  }

  @Post()
  @AdminRoles('superAdmin')
  @ResponseMessage('Admin created')
  @ApiEnvelope(AdminDto, 201)
  @ApiErrors(400, 409)
  create(@Body() dto: CreateAdminDto): Promise<AdminDto> {
    return this.admins.create(dto);
  }

  @Get(':uuid')
  @AdminRoles('superAdmin')
  @ResponseMessage('Admin fetched')
  @ApiEnvelope(AdminDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminDto> {
    return this.admins.get(uuid);
  }

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
