import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { InboundBody, InboundBodyValue } from '../../common/http/inbound-body.decorator';
import { BulkFeed, LargeBody } from '../../common/http/large-body';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { ProviderEventPayloadDto, ProviderEventsResultDto } from './dto/provider-events.dto';
import { ProviderEventsService } from './provider-events.service';

@ApiTags('callbacks')
@Controller('callback/mail-provider')
export class ProviderEventsController {
  constructor(private readonly events: ProviderEventsService) {}

  /**
   * Receive the mail provider's delivery events.
   *
   * @remarks
   * For the mail provider's webhook, with HTTP Basic (MAIL_PROVIDER_WEBHOOK_USER / _PASSWORD, or a list of
   * `user:password` pairs for rotation): 401 with `WWW-Authenticate` otherwise, 503 while unset. Postmark (one
   * object), SendGrid and SparkPost (arrays) are told apart by their shape. Bodies up to 10 MB, gzip
   * accepted. Each event is stored once (a repeat is counted in `duplicates`), applied to its clean record
   * (matched on the Message-ID, else the provider's message id, always with the recipient), and hard bounces,
   * complaints and unsubscribes add suppression entries. An event whose message is not known yet is kept and
   * applied when it arrives. One bad event never fails the batch (`skipped`); only a body that is no
   * provider's payload is a 400. 503 when the events are stored but could not be applied yet: the
   * provider's retry of the batch, or the `retry-callbacks` job, applies them.
   */
  @Post()
  @HttpCode(200)
  @UseCredential('basic')
  @LargeBody()
  @BulkFeed()
  @ResponseMessage('Mail-provider events received')
  @ApiBody({
    type: ProviderEventPayloadDto,
    description: 'One Postmark event, or an array of SendGrid or SparkPost events',
  })
  @ApiEnvelope(ProviderEventsResultDto)
  @ApiErrors(400, 413, 415)
  receive(
    @InboundBody({ json: 'object-or-array' }) payload: InboundBodyValue,
  ): Promise<ProviderEventsResultDto> {
    return this.events.receive(payload.body);
  }
}
