import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RawResponse, ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import type { Admin } from '../admins/entities/admin.entity';
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

  /**
   * List the billings of every company.
   *
   * @remarks
   * superAdmin, admin and accounting. Paged; filtered by `status`, `companyUuid`, `method`, `from` and `to`.
   */
  @Get()
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Billings fetched')
  @ApiEnvelope(AdminBillingPageDto)
  @ApiErrors(400)
  list(@Query() query: AdminListBillingsQueryDto): Promise<Page<AdminBillingDto>> {
    return this.reviews.list(query);
  }

  /**
   * Revenue and billing counts over a period.
   *
   * @remarks
   * superAdmin and accounting. Revenue per period (`interval`: month or day) and currency, and billing counts
   * per status, between `from` and `to`: the same figures as GET /api/v1/admins/reports/revenue. 400 for a
   * missing or too long window.
   */
  // Declared before `:uuid`, so that `summary` is not read as a uuid.
  @Get('summary')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Billing summary fetched')
  @ApiEnvelope(RevenueSummaryDto)
  @ApiErrors(400)
  summary(@Query() query: RevenueSummaryQueryDto): Promise<RevenueSummaryDto> {
    return this.reports.summary(query);
  }

  /**
   * Read one billing with its company.
   *
   * @remarks
   * superAdmin, admin and accounting. The billing with its company, the review note, the refund reason and the
   * reviewing admin. 404 when no billing has this uuid.
   */
  @Get(':uuid')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @ResponseMessage('Billing fetched')
  @ApiEnvelope(AdminBillingDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminBillingDto> {
    return this.reviews.get(uuid);
  }

  /**
   * Download a billing's payment proof.
   *
   * @remarks
   * superAdmin, admin and accounting. The file as uploaded, with its content type, instead of the JSON
   * envelope. 404 for an unknown billing, or one without a proof.
   */
  @Get(':uuid/proof')
  @AdminRoles('superAdmin', 'admin', 'accounting')
  @RawResponse()
  @ApiProofDownload()
  @ApiErrors(400, 404)
  async proof(@Param('uuid', uuidPipe) uuid: string, @Res() reply: FastifyReply): Promise<void> {
    await sendProof(reply, await this.billings.proof(uuid));
  }

  /**
   * Approve a billing: mark it paid.
   *
   * @remarks
   * superAdmin and accounting. A `pending` or `awaiting_review` billing becomes `paid`, with an optional
   * `note`; the subscription period starts (or the running one is extended) and the company's users are
   * notified, in one transaction. 409 for any other status; 404 when no billing has this uuid.
   */
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

  /**
   * Reject a billing's payment proof.
   *
   * @remarks
   * superAdmin and accounting. An `awaiting_review` billing goes back to `pending` with the `reason` stored:
   * the proof is cleared so that a new one can be uploaded, the payment window is opened again, and the
   * company's users are notified and e-mailed. 409 for any other status; 404 when no billing has this uuid.
   */
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

  /**
   * Mark a paid billing refunded.
   *
   * @remarks
   * superAdmin and accounting. A `paid` billing becomes `refunded`, with the `reason` noted; the subscription
   * is left as it is (change it on the company when needed). 409 for any other status; 404 when no billing
   * has this uuid.
   */
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
