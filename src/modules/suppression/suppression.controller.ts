import { Body, Controller, Delete, Get, HttpStatus, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, UserAuth } from '../auth/access.decorators';
import { User } from '../users/entities/user.entity';
import {
  AddSuppressionDto,
  CheckSuppressionQueryDto,
  ListSuppressionQueryDto,
} from './dto/suppression-requests.dto';
import {
  SuppressionAddedDto,
  SuppressionCheckDto,
  SuppressionEntryDto,
  SuppressionPageDto,
} from './dto/suppression-response.dto';
import { SuppressionService } from './suppression.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/** The caller's company's suppression list. */
@ApiTags('suppression')
@Controller('api/v1/suppression')
export class SuppressionController {
  constructor(private readonly suppression: SuppressionService) {}

  @Get()
  @UserAuth()
  @ResponseMessage('Suppression list fetched')
  @ApiEnvelope(SuppressionPageDto)
  @ApiErrors(400)
  list(
    @CurrentUser() user: User,
    @Query() query: ListSuppressionQueryDto,
  ): Promise<Page<SuppressionEntryDto>> {
    return this.suppression.list({ companyId: user.companyId }, query);
  }

  /** 201 when at least one address was added, 200 when every valid one was listed already. */
  @Post()
  @UserAuth()
  @ResponseMessage('Suppression list updated')
  @ApiEnvelope(SuppressionAddedDto, 201, 'At least one address added')
  @ApiEnvelope(SuppressionAddedDto, 200, 'Nothing new: every valid address was listed already')
  @ApiErrors(400)
  async add(
    @CurrentUser() user: User,
    @Body() dto: AddSuppressionDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SuppressionAddedDto> {
    const result = await this.suppression.add(user.companyId, {
      emails: dto.emails,
      reason: dto.reason ?? 'manual',
      source: 'user',
      detail: dto.detail,
    });
    if (result.added === 0) void reply.status(HttpStatus.OK);
    return result;
  }

  @Get('check')
  @UserAuth()
  @ResponseMessage('Suppression checked')
  @ApiEnvelope(SuppressionCheckDto)
  @ApiErrors(400)
  check(@CurrentUser() user: User, @Query() query: CheckSuppressionQueryDto): Promise<SuppressionCheckDto> {
    return this.suppression.check(user.companyId, query.email);
  }

  @Get('export')
  @UserAuth()
  @RawResponse()
  @ApiOkResponse({
    description: 'The list as CSV (`email,reason,source,detail,expires_at,created_at`), as an attachment',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  export(@CurrentUser() user: User, @Res() reply: FastifyReply): FastifyReply {
    return reply
      .status(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="suppression.csv"')
      .header('cache-control', 'private, no-store')
      .send(this.suppression.exportCsv(user.companyId));
  }

  @Delete(':uuid')
  @UserAuth()
  @ResponseMessage('Suppression entry removed')
  @ApiEnvelope()
  @ApiErrors(400, 403, 404)
  async remove(@CurrentUser() user: User, @Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.suppression.removeOwn(user.companyId, uuid);
    return {};
  }
}
