import { Body, Controller, Delete, Get, HttpStatus, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { AdminAddSuppressionDto, AdminListSuppressionQueryDto } from './dto/suppression-requests.dto';
import { SuppressionAddedDto, SuppressionEntryDto, SuppressionPageDto } from './dto/suppression-response.dto';
import { SuppressionService } from './suppression.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

/** Every company's suppression list and the global one. */
@ApiTags('admin suppression')
@Controller('api/v1/admins/suppression')
export class SuppressionAdminController {
  constructor(private readonly suppression: SuppressionService) {}

  /**
   * List suppression entries: one company's, the global list, or all.
   *
   * @remarks
   * superAdmin and admin. `companyUuid` picks one company, `global` the global list, and none every entry;
   * filtered by `reason` and a free-text `search`. 404 for an unknown company.
   */
  @Get()
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Suppression entries fetched')
  @ApiEnvelope(SuppressionPageDto)
  @ApiErrors(400, 404)
  async list(@Query() query: AdminListSuppressionQueryDto): Promise<Page<SuppressionEntryDto>> {
    const scope =
      query.companyUuid === undefined
        ? 'all'
        : query.companyUuid.toLowerCase() === 'global'
          ? 'global'
          : { companyId: await this.suppression.companyIdOf(query.companyUuid) };
    return this.suppression.list(scope, query);
  }

  /**
   * Add addresses to a company's suppression list or to the global list.
   *
   * @remarks
   * superAdmin and admin. Without `companyUuid` the addresses go to the global list, which applies to every
   * company. Takes `emails`, a `reason`, an optional `detail` and an optional `expiresAt`. Answers 201 when
   * at least one address was added, and 200 when every valid one was listed already. 400 for an `expiresAt`
   * that is not in the future; 404 for an unknown company.
   */
  @Post()
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Suppression list updated')
  @ApiEnvelope(SuppressionAddedDto, 201, 'At least one address added')
  @ApiEnvelope(SuppressionAddedDto, 200, 'Nothing new: every valid address was listed already')
  @ApiErrors(400, 404)
  async add(
    @Body() dto: AdminAddSuppressionDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SuppressionAddedDto> {
    const expiresAt = SuppressionService.futureDate(dto.expiresAt);
    const companyId = dto.companyUuid ? await this.suppression.companyIdOf(dto.companyUuid) : null;
    const result = await this.suppression.add(companyId, {
      emails: dto.emails,
      reason: dto.reason,
      source: 'admin',
      detail: dto.detail,
      expiresAt,
    });
    if (result.added === 0) void reply.status(HttpStatus.OK);
    return result;
  }

  /**
   * Remove a suppression entry.
   *
   * @remarks
   * superAdmin and admin. Any entry of any company or of the global list, `complaint` entries included. 404
   * when no entry has this uuid.
   */
  @Delete(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Suppression entry removed')
  @ApiEnvelope()
  @ApiErrors(400, 404)
  async remove(@Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.suppression.remove(uuid);
    return {};
  }
}
