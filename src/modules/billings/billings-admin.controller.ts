import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { Admin } from '../admins/entities/admin.entity';
import { AdminRoles, CurrentAdmin } from '../auth/access.decorators';
import { BillingReportsService } from './billing-reports.service';
import { BillingReviewsService } from './billing-reviews.service';
import { BillingsService } from './billings.service';
import {
  AdminListBillingsQueryDto,
  ApproveBillingDto,
  RefundBillingDto,
  RejectBillingDto,
  RevenueSummaryQueryDto,
} from './dto/billing-requests.dto';
import { AdminBillingDto, AdminBillingPageDto, RevenueSummaryDto } from './dto/billing-response.dto';
import { ApiProofDownload, sendProof } from './proof-download';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

@ApiTags('admin billings')
@Controller('api/v1/admins/billings')
export class BillingsAdminController {
  constructor(
    private readonly reviews: BillingReviewsService,
    private readonly reports: BillingReportsService,
    private readonly billings: BillingsService,
  ) {}

  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Billings fetched')
  @ApiEnvelope(AdminBillingPageDto)
  @ApiErrors(400)
  list(@Query() query: AdminListBillingsQueryDto): Promise<Page<AdminBillingDto>> {
    return this.reviews.list(query);
  }

  /** Declared before `:uuid`. */
  @Get('summary')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Billing summary fetched')
  @ApiEnvelope(RevenueSummaryDto)
  @ApiErrors(400)
  summary(@Query() query: RevenueSummaryQueryDto): Promise<RevenueSummaryDto> {
    return this.reports.summary(query);
  }

  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Billing fetched')
  @ApiEnvelope(AdminBillingDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminBillingDto> {
    return this.reviews.get(uuid);
  }

  @Get(':uuid/proof')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @RawResponse()
  @ApiProofDownload()
  @ApiErrors(400, 404)
  async proof(@Param('uuid', uuidPipe) uuid: string, @Res() reply: FastifyReply): Promise<void> {
    await sendProof(reply, await this.billings.proof(uuid));
  }

  @Post(':uuid/approve')
  @AdminRoles('superAdmin', 'accounting')
  @HttpCode(200)
  @ResponseMessage('Billing approved')
  @ApiEnvelope(AdminBillingDto)
  @ApiErrors(400, 404, 409)
  approve(
    @CurrentAdmin() admin: Admin,
    @Param('uuid', uuidPipe) uuid: string,
    @Body() dto: ApproveBillingDto,
  ): Promise<AdminBillingDto> {
    return this.reviews.approve(admin, uuid, dto);
  }

  @Post(':uuid/reject')
  @AdminRoles('superAdmin', 'accounting')
  @HttpCode(200)
  @ResponseMessage('Billing rejected')
  @ApiEnvelope(AdminBillingDto)
  @ApiErrors(400, 404, 409)
  reject(
    @CurrentAdmin() admin: Admin,
    @Param('uuid', uuidPipe) uuid: string,
    @Body() dto: RejectBillingDto,
  ): Promise<AdminBillingDto> {
    return this.reviews.reject(admin, uuid, dto);
  }

  @Post(':uuid/refund')
  @AdminRoles('superAdmin', 'accounting')
  @HttpCode(200)
  @ResponseMessage('Billing refunded')
  @ApiEnvelope(AdminBillingDto)
  @ApiErrors(400, 404, 409)
  refund(@Param('uuid', uuidPipe) uuid: string, @Body() dto: RefundBillingDto): Promise<AdminBillingDto> {
    return this.reviews.refund(uuid, dto);
  }
}
