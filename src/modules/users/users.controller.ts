import { Body, Controller, Get, HttpCode, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { RateLimit } from '../../common/rate-limit/rate-limit.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, Public, UserAuth } from '../auth/access.decorators';
import {
  ChangePasswordDto,
  EmailDto,
  LoginDto,
  RegisterDto,
  ResetPasswordDto,
  TokenDto,
  UpdateMeDto,
} from './dto/user-requests.dto';
import { AcceptInviteDto, InvitationAcceptedDto } from './dto/invitation.dto';
import { EmailVerifiedDto, MeDto, RegisteredDto, UserLoginDto } from './dto/user-response.dto';
import { User } from './entities/user.entity';
import { UsersService } from './users.service';

@ApiTags('users')
@Controller('api/v1/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post('register')
  @Public()
  @ResponseMessage('Registration successful, check your e-mail to verify your address')
  @ApiEnvelope(RegisteredDto, 201)
  @ApiErrors(400, 409, 429)
  register(@Body() dto: RegisterDto): Promise<RegisteredDto> {
    return this.users.register(dto);
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  @RateLimit('login')
  @ResponseMessage('Login successful')
  @ApiEnvelope(UserLoginDto)
  @ApiErrors(400, 401, 403, 429)
  login(@Body() dto: LoginDto): Promise<UserLoginDto> {
    return this.users.login(dto);
  }

  @Post('verify-email')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Email verified')
  @ApiEnvelope(EmailVerifiedDto)
  @ApiErrors(400, 401, 429)
  verifyEmail(@Body() dto: TokenDto): Promise<EmailVerifiedDto> {
    return this.users.verifyEmail(dto.token);
  }

  @Post('resend-verification')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an unverified account, a verification e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async resendVerification(@Body() dto: EmailDto): Promise<object> {
    await this.users.resendVerification(dto.email);
    return {};
  }

  @Post('forgot-password')
  @Public()
  @HttpCode(200)
  @RateLimit('email-per-hour')
  @ResponseMessage('If the address belongs to an account, a reset e-mail is on its way')
  @ApiEnvelope()
  @ApiErrors(400, 429)
  async forgotPassword(@Body() dto: EmailDto): Promise<object> {
    await this.users.forgotPassword(dto.email);
    return {};
  }

  @Post('reset-password')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Password has been reset')
  @ApiEnvelope()
  @ApiErrors(400, 401, 429)
  async resetPassword(@Body() dto: ResetPasswordDto): Promise<object> {
    await this.users.resetPassword(dto);
    return {};
  }

  @Post('accept-invite')
  @Public()
  @HttpCode(200)
  @ResponseMessage('Invitation accepted')
  @ApiEnvelope(InvitationAcceptedDto)
  @ApiErrors(400, 401, 403, 429)
  acceptInvite(@Body() dto: AcceptInviteDto): Promise<InvitationAcceptedDto> {
    return this.users.acceptInvite(dto);
  }

  @Get('me')
  @UserAuth()
  @ResponseMessage('Profile fetched')
  @ApiEnvelope(MeDto)
  me(@CurrentUser() user: User): MeDto {
    return this.users.me(user);
  }

  @Patch('me')
  @UserAuth()
  @ResponseMessage('Profile updated')
  @ApiEnvelope(MeDto)
  @ApiErrors(400)
  updateMe(@CurrentUser() user: User, @Body() dto: UpdateMeDto): Promise<MeDto> {
    return this.users.updateMe(user, dto);
  }

  @Put('me/password')
  @UserAuth()
  @ResponseMessage('Password changed')
  @ApiEnvelope()
  @ApiErrors(400)
  async changePassword(@CurrentUser() user: User, @Body() dto: ChangePasswordDto): Promise<object> {
    await this.users.changePassword(user, dto);
    return {};
  }
}
