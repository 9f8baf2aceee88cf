import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CallerCompany, CurrentUser, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { OwnedEntity } from '../auth/guards/company-ownership.guard';
import { PackageDto, PackageListDto } from '../packages/dto/package-response.dto';
import { PackagesService } from '../packages/packages.service';
import type { Company } from '../companies/entities/company.entity';
import type { User } from '../users/entities/user.entity';
import { BillingsService } from './billings.service';
import { CreateBillingDto, ListBillingsQueryDto } from './dto/billing-requests.dto';
import { Billing } from './entities/billing.entity';
import { BillingDto, BillingPageDto } from './dto/billing-response.dto';
import { OwnedBilling } from './owned-billing.decorator';
import { MAX_PROOF_BYTES, readProofUpload } from './proof-upload';
import { ApiProofDownload, sendProof } from './proof-download';

@ApiTags('billings')
@Controller('api/v1/billings')
export class BillingsController {
  constructor(
    private readonly billings: BillingsService,
    private readonly packages: PackagesService,
  ) {}

  /**
   * List the packages on sale.
   *
   * @remarks
   * Any active user. The active, public packages with their quota and price, to choose from for POST
   * /api/v1/billings.
   */
  @Get('packages')
  @UserAuth({ key: 'read' })
  @ResponseMessage('Packages fetched')
  @ApiEnvelope(PackageListDto)
  listPackages(@Query() query: PageQueryDto): Promise<Page<PackageDto>> {
    return this.packages.listOffered(query.page, query.limit);
  }

  /**
   * List the company's billings.
   *
   * @remarks
   * Any active user of the company. The company's billings with their package, amount and status, newest
   * first, paged; filtered by `status`. 400 for an unknown status or a paging value out of range.
   */
  @Get()
  @UserAuth({ key: 'read' })
  @ResponseMessage('Billings fetched')
  @ApiEnvelope(BillingPageDto)
  @ApiErrors(400)
  list(@CallerCompany() company: Company, @Query() query: ListBillingsQueryDto): Promise<Page<BillingDto>> {
    return this.billings.list(company.id, query);
  }

  /**
   * Start buying a package: create a billing.
   *
   * @remarks
   * Owner only. Creates a `pending` billing for an active, public package, paid through the payment gateway
   * (`gateway`: then POST /api/v1/payment-gateway) or by manual transfer (`manual`: then upload a proof), and
   * answers 201. When the company already has an open billing (pending or awaiting review) for the same
   * package, that billing is returned with 200 instead. 404 for an unknown or unavailable package.
   */
  @Post()
  @OwnerAuth()
  @ResponseMessage('Billing created')
  @ApiEnvelope(BillingDto, 201, 'A new billing')
  @ApiEnvelope(BillingDto, 200, 'The open billing (pending or awaiting review) for the same package')
  @ApiErrors(400, 404)
  async create(
    @CurrentUser() user: User,
    @Body() dto: CreateBillingDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BillingDto> {
    const { billing, created } = await this.billings.create(user, dto);
    if (!created) void reply.status(HttpStatus.OK);
    return billing;
  }

  /**
   * Read one of the company's billings.
   *
   * @remarks
   * Any active user of the company. 404 for an unknown uuid or another company's billing (its existence is
   * not revealed).
   */
  @Get(':uuid')
  @UserAuth({ key: 'read' })
  @OwnedBilling()
  @ResponseMessage('Billing fetched')
  @ApiEnvelope(BillingDto)
  get(@OwnedEntity() billing: Billing): Promise<BillingDto> {
    return this.billings.get(billing.uuid);
  }

  /**
   * Upload the payment proof of a manual transfer.
   *
   * @remarks
   * Owner only. Multipart, with the file in field `file`: PNG, JPEG, GIF, WebP or PDF (recognised by
   * content), at most 2 MB. The billing goes from `pending` to `awaiting_review`, and accounting admins are
   * notified. 409 unless the billing is `pending`; 413 for a larger file; 415 for another type; 404 for an
   * unknown uuid or another company's billing.
   */
  @Post(':uuid/proof')
  @OwnerAuth()
  @OwnedBilling()
  @HttpCode(200)
  @ResponseMessage('Payment proof uploaded')
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    description: `The proof in field \`file\`: PNG, JPEG, GIF, WebP or PDF (recognised by content), at most ${MAX_PROOF_BYTES} bytes`,
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary' } },
    },
  })
  @ApiEnvelope(BillingDto)
  @ApiErrors(409, 413, 415)
  async uploadProof(@OwnedEntity() billing: Billing, @Req() request: FastifyRequest): Promise<BillingDto> {
    await this.billings.assertCanUploadProof(billing.uuid);
    const proof = await readProofUpload(request);
    return this.billings.uploadProof(billing.uuid, proof);
  }

  /**
   * Download the payment proof of a billing.
   *
   * @remarks
   * Any active user of the company. The file as uploaded, with its content type, instead of the JSON
   * envelope. 404 when the billing has no proof, or for an unknown uuid or another company's billing.
   */
  @Get(':uuid/proof')
  @UserAuth()
  @OwnedBilling()
  @RawResponse()
  @ApiProofDownload()
  async proof(@OwnedEntity() billing: Billing, @Res() reply: FastifyReply): Promise<void> {
    await sendProof(reply, await this.billings.proof(billing.uuid));
  }

  /**
   * Cancel a pending billing.
   *
   * @remarks
   * Owner only. The billing becomes `cancelled`. 409 unless it is `pending`; 404 for an unknown uuid or
   * another company's billing.
   */
  @Post(':uuid/cancel')
  @OwnerAuth()
  @OwnedBilling()
  @HttpCode(200)
  @ResponseMessage('Billing cancelled')
  @ApiEnvelope(BillingDto)
  @ApiErrors(409)
  cancel(@OwnedEntity() billing: Billing): Promise<BillingDto> {
    return this.billings.cancel(billing.uuid);
  }
}
