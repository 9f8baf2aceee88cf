import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { BadRequestError } from '../../common/errors/domain-error';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { RelayDecisionDto, RelayDecisionQueryDto } from './dto/relay-decision.dto';
import { RelayDecisionService } from './relay-decision.service';

@ApiTags('internal')
@Controller('api/internal')
export class RelayDecisionController {
  constructor(private readonly decisions: RelayDecisionService) {}

  /**
   * Decide whether the relay may accept a message.
   *
   * @remarks
   * For the SMTP relay (or the Postfix policy server), with the internal API key in `x-api-key` or an
   * `Authorization: Bearer` header; 401 for a wrong key, 503 while INTERNAL_API_KEY is unset. The company is
   * the SASL `relayUsername`'s; else the one company whose allowed IPs hold `clientAddress`; else the owner of
   * the sender's verified domain. An unknown account is a 200 with `allowed: false`. `action` is the Postfix
   * policy word: `OK`, `REJECT <text>` (unknown account, suspended, no package, sender domain not verified when
   * RELAY_REQUIRE_VERIFIED_DOMAIN) or `DEFER_IF_PERMIT <text>` (period expired, quota exceeded). Suppressed
   * recipients are listed in `rejectedRecipients`, not a reason to refuse the message. A company's answer is
   * cached for at most 5 seconds and forgotten at once when its state changes.
   */
  @Post('relay-status')
  @HttpCode(200)
  @UseCredential('api-key')
  @ResponseMessage('Relay decision')
  @ApiEnvelope(RelayDecisionDto)
  @ApiErrors(400)
  decide(@Body() query: RelayDecisionQueryDto): Promise<RelayDecisionDto> {
    if (!query.relayUsername && !query.clientAddress && !query.sender) {
      throw new BadRequestError('One of relayUsername, clientAddress or sender is required');
    }
    return this.decisions.decide(query);
  }
}
