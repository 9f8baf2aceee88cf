import { Body, Controller, Delete, Get, HttpStatus, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CallerCompany, UserAuth } from '../auth/access.decorators';
import { OwnedEntity, OwnedResource } from '../auth/guards/company-ownership.guard';
import type { Company } from '../companies/entities/company.entity';
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
import { SuppressionEntry } from './entities/suppression-entry.entity';
import { SUPPRESSION_NOT_FOUND, SuppressionService } from './suppression.service';

/** The caller's company's suppression list. */
@ApiTags('suppression')
@Controller('api/v1/suppression')
export class SuppressionController {
  constructor(private readonly suppression: SuppressionService) {}

  /**
   * List the company's suppression entries.
   *
   * @remarks
   * Any active user of the company. Paged; filtered by `reason` and a free-text `search`.
   */
  @Get()
  @UserAuth({ key: 'read' })
  @ResponseMessage('Suppression list fetched')
  @ApiEnvelope(SuppressionPageDto)
  @ApiErrors(400)
  list(
    @CallerCompany() company: Company,
    @Query() query: ListSuppressionQueryDto,
  ): Promise<Page<SuppressionEntryDto>> {
    return this.suppression.list({ companyId: company.id }, query);
  }

  /**
   * Add addresses to the company's suppression list.
   *
   * @remarks
   * Any active user of the company. Takes 1 to 1000 `emails`, an optional `reason` (`manual`, the default, or
   * `unsubscribe`) and an optional `detail`. Answers 201 when at least one address was added, and 200 when
   * every valid one was listed already; malformed addresses come back in `invalid` instead of failing the
   * request.
   */
  @Post()
  @UserAuth({ key: 'write' })
  @ResponseMessage('Suppression list updated')
  @ApiEnvelope(SuppressionAddedDto, 201, 'At least one address added')
  @ApiEnvelope(SuppressionAddedDto, 200, 'Nothing new: every valid address was listed already')
  @ApiErrors(400)
  async add(
    @CallerCompany() company: Company,
    @Body() dto: AddSuppressionDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SuppressionAddedDto> {
    const result = await this.suppression.add(company.id, {
      emails: dto.emails,
      reason: dto.reason ?? 'manual',
      source: 'user',
      detail: dto.detail,
    });
    if (result.added === 0) void reply.status(HttpStatus.OK);
    return result;
  }

  /**
   * Check whether an address is suppressed for the company.
   *
   * @remarks
   * Any active user of the company. Returns `suppressed`, the company's entry when there is one, and `global`
   * when the platform-wide list holds the address.
   */
  @Get('check')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Suppression checked')
  @ApiEnvelope(SuppressionCheckDto)
  @ApiErrors(400)
  check(
    @CallerCompany() company: Company,
    @Query() query: CheckSuppressionQueryDto,
  ): Promise<SuppressionCheckDto> {
    return this.suppression.check(company.id, query.email);
  }

  /**
   * Export the company's suppression list as CSV.
   *
   * @remarks
   * Any active user of the company. A `text/csv` attachment (suppression.csv) with the columns email, reason,
   * source, detail, expires_at and created_at, instead of the JSON envelope.
   */
  @Get('export')
  @UserAuth({ key: 'read' })
  @RawResponse()
  @ApiOkResponse({
    description: 'The list as CSV (`email,reason,source,detail,expires_at,created_at`), as an attachment',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  export(@CallerCompany() company: Company, @Res() reply: FastifyReply): FastifyReply {
    return reply
      .status(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="suppression.csv"')
      .header('cache-control', 'private, no-store')
      .send(this.suppression.exportCsv(company.id));
  }

  /**
   * Remove an entry from the company's suppression list.
   *
   * @remarks
   * Any active user of the company. 403 for a `complaint` entry, which only an admin can remove; 404 for an
   * unknown uuid or another company's entry.
   */
  @Delete(':uuid')
  @UserAuth({ key: 'write' })
  @OwnedResource(SuppressionEntry, SUPPRESSION_NOT_FOUND)
  @ResponseMessage('Suppression entry removed')
  @ApiEnvelope()
  @ApiErrors(403)
  async remove(@OwnedEntity() entry: SuppressionEntry): Promise<object> {
    await this.suppression.removeOwn(entry);
    return {};
  }
}
