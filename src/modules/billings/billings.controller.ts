import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { CurrentUser, OwnerAuth, UserAuth } from '../auth/access.decorators';
import { PackageDto, PackageListDto } from '../packages/dto/package-response.dto';
import { PackagesService } from '../packages/packages.service';
import { User } from '../users/entities/user.entity';
import { BillingsService } from './billings.service';
import { CreateBillingDto, ListBillingsQueryDto } from './dto/billing-requests.dto';
import { BillingDto, BillingPageDto } from './dto/billing-response.dto';
import { OwnedBilling } from './owned-billing.decorator';
import { MAX_PROOF_BYTES, readProofUpload } from './proof-upload';
import { ApiProofDownload, sendProof } from './proof-download';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

@ApiTags('billings')
@Controller('api/v1/billings')
export class BillingsController {
  constructor(
    private readonly billings: BillingsService,
    private readonly packages: PackagesService,
  ) {}

  @Get('packages')
  @UserAuth()
  @ResponseMessage('Packages fetched')
  @ApiEnvelope(PackageListDto)
  listPackages(): Promise<{ items: PackageDto[] }> {
    return this.packages.listOffered();
  }

  @Get()
  @UserAuth()
  @ResponseMessage('Billings fetched')
  @ApiEnvelope(BillingPageDto)
  @ApiErrors(400)
  list(@CurrentUser() user: User, @Query() query: ListBillingsQueryDto): Promise<Page<BillingDto>> {
    return this.billings.list(user.companyId, query);
  }

  /** 201 with a new billing, or 200 with the company's open billing (pending or awaiting review) for the same package. */
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

  @Get(':uuid')
  @UserAuth()
  @OwnedBilling()
  @ResponseMessage('Billing fetched')
  @ApiEnvelope(BillingDto)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<BillingDto> {
    return this.billings.get(uuid);
  }

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
  async uploadProof(
    @Param('uuid', uuidPipe) uuid: string,
    @Req() request: FastifyRequest,
  ): Promise<BillingDto> {
    await this.billings.assertCanUploadProof(uuid);
    const proof = await readProofUpload(request);
    return this.billings.uploadProof(uuid, proof);
  }

  @Get(':uuid/proof')
  @UserAuth()
  @OwnedBilling()
  @RawResponse()
  @ApiProofDownload()
  async proof(@Param('uuid', uuidPipe) uuid: string, @Res() reply: FastifyReply): Promise<void> {
    await sendProof(reply, await this.billings.proof(uuid));
  }

  @Post(':uuid/cancel')
  @OwnerAuth()
  @OwnedBilling()
  @HttpCode(200)
  @ResponseMessage('Billing cancelled')
  @ApiEnvelope(BillingDto)
  @ApiErrors(409)
  cancel(@Param('uuid', uuidPipe) uuid: string): Promise<BillingDto> {
    return this.billings.cancel(uuid);
  }
}
