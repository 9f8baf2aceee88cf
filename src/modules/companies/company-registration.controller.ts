import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { RegisterDto } from '../users/dto/user-requests.dto';
import { RegisteredDto } from '../users/dto/user-response.dto';
import { CompanyRegistrationService } from './company-registration.service';

/** `POST /api/v1/users/register`: under the users' path, owned by the area that writes the company. */
@ApiTags('users')
@Controller('api/v1/users')
export class CompanyRegistrationController {
  constructor(private readonly registration: CompanyRegistrationService) {}

  /**
   * Register a company and its first user, the owner.
   *
   * @remarks
   * Public. Creates the company and its owner, whose account stays `pending` until the e-mail address is
   * verified: a verification e-mail is sent at once (its link is valid for 1 day). The password is 10 to 128
   * characters. 409 when the e-mail address is already registered.
   */
  @Post('register')
  @Public()
  @ResponseMessage('Registration successful, check your e-mail to verify your address')
  @ApiEnvelope(RegisteredDto, 201)
  @ApiErrors(400, 409, 429)
  register(@Body() dto: RegisterDto): Promise<RegisteredDto> {
    return this.registration.register(dto);
  }
}
