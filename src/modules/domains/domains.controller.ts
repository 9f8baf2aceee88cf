import { Body, Controller, Delete, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CallerCompany, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { OwnedEntity } from '../auth/guards/company-ownership.guard';
import type { Company } from '../companies/entities/company.entity';
import { DomainsService } from './domains.service';
import { AddDomainDto, ListDomainsQueryDto } from './dto/domain-requests.dto';
import { DomainDto, DomainPageDto } from './dto/domain-response.dto';
import type { Domain } from './entities/domain.entity';
import { OwnedDomain } from './owned-domain.decorator';
import { VerifyRateLimit } from './verify-rate-limit';

/** The caller's company's sender domains. */
@ApiTags('domains')
@Controller('api/v1/domains')
export class DomainsController {
  constructor(
    private readonly domains: DomainsService,
    private readonly verifyLimit: VerifyRateLimit,
  ) {}

  /**
   * List the company's sender domains.
   *
   * @remarks
   * Any active user of the company. Paged, newest first; filtered by `status`.
   */
  @Get()
  @UserAuth({ key: 'read' })
  @ResponseMessage('Domains fetched')
  @ApiEnvelope(DomainPageDto)
  @ApiErrors(400)
  list(@CallerCompany() company: Company, @Query() query: ListDomainsQueryDto): Promise<Page<DomainDto>> {
    return this.domains.listOfCompany(company, query);
  }

  /**
   * Add a sender domain.
   *
   * @remarks
   * Owner only. `name` is a domain name of at least two labels (`acme.co.id`, `mail.acme.co.id`), not an IP
   * address, at most 253 characters, with no scheme or path; an internationalised name is stored as punycode.
   * Creates the DKIM key (RSA 2048; one at a time per process, so a burst of adds waits its turn) and answers
   * the domain with the `records` to publish, all `unchecked`. 409 when the company already added it, when
   * another company has verified it, or when the company has MAX_DOMAINS_PER_COMPANY domains already (default
   * 50; the message names the limit).
   */
  @Post()
  @OwnerAuth({ key: 'write' })
  @ResponseMessage('Domain added, publish its records then verify it')
  @ApiEnvelope(DomainDto, 201)
  @ApiErrors(400, 409)
  add(@CallerCompany() company: Company, @Body() dto: AddDomainDto): Promise<DomainDto> {
    return this.domains.add(company.id, dto.name);
  }

  /**
   * Read a sender domain.
   *
   * @remarks
   * Any active user of the company. The domain with its `records` and each record's last check.
   */
  @Get(':uuid')
  @UserAuth({ key: 'read' })
  @OwnedDomain()
  @ResponseMessage('Domain fetched')
  @ApiEnvelope(DomainDto)
  view(@OwnedEntity() domain: Domain): Promise<DomainDto> {
    return this.domains.view(domain.id);
  }

  /**
   * Verify a sender domain against live DNS.
   *
   * @remarks
   * Owner only. Checks every record now (each DNS query bounded to 5 s; no answer in time is `missing` with
   * "DNS timeout") and answers the domain: `verified` when ownership, SPF and DKIM are right; a failing check
   * leaves a pending domain pending, with each record saying why. Once per 10 s per domain (429 with
   * `retry-after`). 409 when another company verified the same name first.
   */
  @Post(':uuid/verify')
  @HttpCode(200)
  @OwnerAuth({ key: 'write' })
  @OwnedDomain()
  @ResponseMessage('Domain checked')
  @ApiEnvelope(DomainDto)
  @ApiErrors(409, 429)
  async verify(
    @OwnedEntity() domain: Domain,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<DomainDto> {
    await this.verifyLimit.take(domain.id, reply);
    return this.domains.verify(domain);
  }

  /**
   * Delete a sender domain.
   *
   * @remarks
   * Owner only. Mail from the domain is no longer relayed for the company.
   */
  @Delete(':uuid')
  @OwnerAuth({ key: 'write' })
  @OwnedDomain()
  @ResponseMessage('Domain deleted')
  @ApiEnvelope()
  async remove(@OwnedEntity() domain: Domain): Promise<object> {
    await this.domains.remove(domain);
    return {};
  }
}
