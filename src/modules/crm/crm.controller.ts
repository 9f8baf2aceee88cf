import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { CrmConnectionService } from './crm-connection.service';
import { CrmConnectedDto, CrmRedirectQueryDto } from './dto/crm.dto';

/**
 * The CRM's OAuth 2.0 redirect, public (the signed state is the credential). Starting the
 * connection and syncing a company are admin routes: crm-admin.controller.ts.
 */
@ApiTags('crm')
@Controller('api/v1')
export class CrmController {
  constructor(private readonly connection: CrmConnectionService) {}

  /**
   * The CRM's OAuth redirect.
   *
   * @remarks
   * Public: the signed `state` is the credential. Exchanges `code` for tokens and stores them encrypted. 400 for
   * a state that is forged, expired or already used, for `?error=` (the admin declined) and for a code the CRM
   * refuses; 502 when the CRM answers a token the service cannot use (nothing is stored then); 503 when the CRM
   * is not configured or does not answer.
   */
  @Get('get-token')
  @Public()
  @ResponseMessage('CRM connected')
  @ApiEnvelope(CrmConnectedDto)
  @ApiErrors(400, 502, 503)
  connect(@Query() query: CrmRedirectQueryDto): Promise<CrmConnectedDto> {
    return this.connection.connect(query);
  }
}
