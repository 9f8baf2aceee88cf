import { Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';
import { AdminRoles } from '../auth/access.decorators';
import { DomainsService } from './domains.service';
import { AdminListDomainsQueryDto } from './dto/domain-requests.dto';
import { DomainDto, DomainPageDto } from './dto/domain-response.dto';
import { VerifyRateLimit } from './verify-rate-limit';

/** Every company's sender domains, for the platform's operators. */
@ApiTags('admin domains')
@Controller('api/v1/admins/domains')
export class DomainsAdminController {
  constructor(
    private readonly domains: DomainsService,
    private readonly verifyLimit: VerifyRateLimit,
  ) {}

  /**
   * List sender domains.
   *
   * @remarks
   * superAdmin and admin. Paged, newest first; filtered by `status`, `companyUuid` and part of the name
   * (`search`). An unknown `companyUuid` lists nothing.
   */
  @Get()
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Domains fetched')
  @ApiEnvelope(DomainPageDto)
  @ApiErrors(400)
  list(@Query() query: AdminListDomainsQueryDto): Promise<Page<DomainDto>> {
    return this.domains.list({ companyUuid: query.companyUuid }, query);
  }

  /**
   * Read any company's sender domain.
   *
   * @remarks
   * superAdmin and admin. The domain with its `records` and each record's last check; 404 when no domain has
   * this uuid.
   */
  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Domain fetched')
  @ApiEnvelope(DomainDto)
  @ApiErrors(400, 404)
  async view(@Param('uuid', uuidPipe) uuid: string): Promise<DomainDto> {
    return this.domains.view((await this.domains.findByUuid(uuid)).id);
  }

  /**
   * Verify any company's sender domain against live DNS.
   *
   * @remarks
   * superAdmin and admin. The same check as the owner's verify, counted in the same window: once per 10 s per
   * domain (429 with `retry-after`). 409 when another company verified the same name first.
   */
  @Post(':uuid/verify')
  @HttpCode(200)
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Domain checked')
  @ApiEnvelope(DomainDto)
  @ApiErrors(400, 404, 409, 429)
  async verify(
    @Param('uuid', uuidPipe) uuid: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DomainDto> {
    const domain = await this.domains.findByUuid(uuid);
    await this.verifyLimit.take(domain.id, reply);
    return this.domains.verify(domain);
  }

  /**
   * Delete any company's sender domain.
   *
   * @remarks
   * superAdmin and admin. Mail from the domain is no longer relayed for its company; 404 when no domain has
   * this uuid.
   */
  @Delete(':uuid')
  @AdminRoles('superAdmin', 'admin')
  @ResponseMessage('Domain deleted')
  @ApiEnvelope()
  @ApiErrors(400, 404)
  async remove(@Param('uuid', uuidPipe) uuid: string): Promise<object> {
    await this.domains.remove(await this.domains.findByUuid(uuid));
    return {};
  }
}
