import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse } from '../../common/http/response-message.decorator';
import { ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Public } from '../auth/access.decorators';
import { ScriptSuiteQueryDto } from './dto/mailbox-suite.dto';
import { MailboxSuitesService } from './mailbox-suites.service';

/** The personalised setup script behind a company's secret URL. */
@ApiTags('mailbox-suites')
@Controller('public/company/script')
export class PublicScriptController {
  constructor(private readonly suites: MailboxSuitesService) {}

  /**
   * Download the company's setup script.
   *
   * @remarks
   * The `token` of the company's current script URL is the credential: any other value (an old token included)
   * is a 404 that says nothing more. A `text/plain` attachment: `relay-setup-<relayUsername>.ps1` (Microsoft 365
   * PowerShell) or `.txt` (Google Workspace instructions). `suite` defaults to the company's choice; 409 when it
   * chose none and no `suite` is given. Errors are JSON envelopes.
   */
  @Get(':token')
  @Public()
  @RawResponse()
  @ApiOkResponse({
    description: 'The script or instructions, as an attachment',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiErrors(400, 404, 409)
  async script(
    @Param('token') token: string,
    @Query() query: ScriptSuiteQueryDto,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const script = await this.suites.publicScript(token, query.suite);
    return reply
      .status(200)
      .header('content-type', 'text/plain; charset=utf-8')
      .header('content-disposition', `attachment; filename="${script.filename}"`)
      .header('cache-control', 'private, no-store')
      .send(script.content);
  }
}
