import { Body, Controller, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { ScriptUrlDto } from '../companies/dto/admin-company-response.dto';
import type { User } from '../users/entities/user.entity';
import {
  MailboxSuiteDto,
  SaveMailboxSuiteDto,
  ScriptPreviewDto,
  ScriptSuiteQueryDto,
} from './dto/mailbox-suite.dto';
import { MailboxSuitesService } from './mailbox-suites.service';

/** The caller's company's mailbox-suite setup. */
@ApiTags('mailbox-suites')
@Controller('api/v1/mailbox-suites')
export class MailboxSuitesController {
  constructor(private readonly suites: MailboxSuitesService) {}

  /**
   * Read the company's mailbox-suite setup.
   *
   * @remarks
   * Any active user of the company. The chosen suite (`none` when the company sends from its own servers), the
   * relay's smart host and TLS name, the verified domains a script routes, the script URL (null until the
   * owner makes one) and the steps to follow.
   */
  @Get()
  @UserAuth()
  @ResponseMessage('Mailbox suite fetched')
  @ApiEnvelope(MailboxSuiteDto)
  view(@CurrentUser() user: User): Promise<MailboxSuiteDto> {
    return this.suites.view(user.companyId);
  }

  /**
   * Choose the company's mailbox suite.
   *
   * @remarks
   * Owner only. Replaces the choice: `suite` and, for Microsoft 365, the distribution group the transport rule
   * is scoped to (`groupName`; left out, `null` or `""` for every sender). A group name with a line break or
   * another control character is a 400: every value of the script stands in a quoted string on one line.
   */
  @Put()
  @OwnerAuth()
  @ResponseMessage('Mailbox suite saved')
  @ApiEnvelope(MailboxSuiteDto)
  @ApiErrors(400)
  save(@CurrentUser() user: User, @Body() dto: SaveMailboxSuiteDto): Promise<MailboxSuiteDto> {
    return this.suites.save(user.companyId, dto);
  }

  /**
   * Make a new script URL.
   *
   * @remarks
   * Owner only. A new secret token for the public script URL; the previous URL answers 404 from now on.
   */
  @Post('script-token')
  @OwnerAuth()
  @HttpCode(200)
  @ResponseMessage('Script URL created, the previous one no longer works')
  @ApiEnvelope(ScriptUrlDto)
  async scriptToken(@CurrentUser() user: User): Promise<ScriptUrlDto> {
    return { scriptUrl: await this.suites.rotateScriptToken(user.companyId) };
  }

  /**
   * Preview the setup script.
   *
   * @remarks
   * Any active user of the company. The script (Microsoft 365) or instructions (Google Workspace) exactly as the
   * public URL serves them, without needing that URL. `suite` defaults to the company's choice; 409 when the
   * company chose none and no `suite` is given.
   */
  @Get('preview')
  @UserAuth()
  @ResponseMessage('Script preview fetched')
  @ApiEnvelope(ScriptPreviewDto)
  @ApiErrors(400, 409)
  preview(@CurrentUser() user: User, @Query() query: ScriptSuiteQueryDto): Promise<ScriptPreviewDto> {
    return this.suites.preview(user.companyId, query.suite);
  }
}
