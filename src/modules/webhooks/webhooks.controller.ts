import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';
import { CallerCompany, OwnerAuth } from '../auth/access.decorators';
import { OwnedEntity, OwnedResource } from '../auth/guards/company-ownership.guard';
import type { Company } from '../companies/entities/company.entity';
import {
  CreateWebhookDto,
  ListDeliveriesQueryDto,
  ReplayDeliveriesDto,
  TestWebhookDto,
  UpdateWebhookDto,
} from './dto/webhook-requests.dto';
import {
  CreatedWebhookDto,
  DeliveryDetailDto,
  DeliveryDto,
  DeliveryPageDto,
  DeliveryQueuedDto,
  ReplayQueuedDto,
  WebhookDetailDto,
  WebhookDto,
  WebhookPageDto,
  WebhookSecretDto,
} from './dto/webhook-response.dto';
import { Webhook } from './entities/webhook.entity';
import { WEBHOOK_NOT_FOUND, WebhooksService } from './webhooks.service';

/** The endpoint of the route's `:uuid`, among the caller's company's (404 otherwise). */
const OwnedWebhook = () => OwnedResource(Webhook, WEBHOOK_NOT_FOUND);

/**
 * The company's event webhooks (platform.md "Event webhooks"): the owner, or an API key (`read`
 * keys read, never a secret; `full` keys everything).
 */
@ApiTags('webhooks')
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /**
   * Add a webhook endpoint.
   *
   * @remarks
   * Owner, or a `full` key. Answers the endpoint and its signing `secret` (`whsec_…`; also readable later with
   * GET /:uuid/secret). `url` is `https://` (`http://` only where WEBHOOK_ALLOW_HTTP allows), at most 2,048
   * characters, without credentials, and its host must resolve to public addresses only (400 otherwise).
   * `events` are event types or `["*"]`; `domains` (the company's) narrow the mail events. 409 past 10
   * endpoints.
   */
  @Post()
  @OwnerAuth({ key: 'write' })
  @ResponseMessage('Webhook created')
  @ApiEnvelope(CreatedWebhookDto, 201)
  @ApiErrors(400, 409)
  create(@CallerCompany() company: Company, @Body() dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(company, dto);
  }

  /**
   * List the company's webhook endpoints.
   *
   * @remarks
   * Owner, or a `read` or `full` key. Newest first; never a secret.
   */
  @Get()
  @OwnerAuth({ key: 'read' })
  @ResponseMessage('Webhooks fetched')
  @ApiEnvelope(WebhookPageDto)
  @ApiErrors(400)
  list(@CallerCompany() company: Company, @Query() query: PageQueryDto): Promise<Page<WebhookDto>> {
    return this.webhooks.list(company, query.page, query.limit);
  }

  /**
   * Read a webhook endpoint.
   *
   * @remarks
   * Owner, or a `read` or `full` key. With its deliveries of the last 24 hours by status.
   */
  @Get(':uuid')
  @OwnerAuth({ key: 'read' })
  @OwnedWebhook()
  @ResponseMessage('Webhook fetched')
  @ApiEnvelope(WebhookDetailDto)
  view(@CallerCompany() company: Company, @OwnedEntity() webhook: Webhook): Promise<WebhookDetailDto> {
    return this.webhooks.view(webhook, company.uuid);
  }

  /**
   * Change a webhook endpoint.
   *
   * @remarks
   * Owner, or a `full` key. `enabled: false` disables it (`manual`); `enabled: true` enables it again and
   * clears `failingSince` (its failed deliveries stay failed until replayed).
   */
  @Patch(':uuid')
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Webhook updated')
  @ApiEnvelope(WebhookDto)
  update(
    @CallerCompany() company: Company,
    @OwnedEntity() webhook: Webhook,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookDto> {
    return this.webhooks.update(webhook, company.uuid, dto);
  }

  /**
   * Delete a webhook endpoint.
   *
   * @remarks
   * Owner, or a `full` key. Its deliveries go with it: the pending ones are never sent, and its delivery
   * history is gone.
   */
  @Delete(':uuid')
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Webhook deleted')
  @ApiEnvelope()
  async remove(@OwnedEntity() webhook: Webhook): Promise<object> {
    await this.webhooks.remove(webhook);
    return {};
  }

  /**
   * Read the endpoint's signing secret.
   *
   * @remarks
   * Owner, or a `full` key (never a `read` key). The `whsec_…` secret that signs the endpoint's requests, to
   * verify them with a Standard Webhooks library.
   */
  @Get(':uuid/secret')
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Webhook secret fetched')
  @ApiEnvelope(WebhookSecretDto)
  async secret(@OwnedEntity() webhook: Webhook): Promise<WebhookSecretDto> {
    return { secret: await this.webhooks.secret(webhook) };
  }

  /**
   * Rotate the endpoint's signing secret.
   *
   * @remarks
   * Owner, or a `full` key. Answers the new secret; the old one keeps signing beside it for 24 hours (two
   * signatures in `webhook-signature`).
   */
  @Post(':uuid/rotate-secret')
  @HttpCode(200)
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Webhook secret rotated')
  @ApiEnvelope(WebhookSecretDto)
  async rotateSecret(@OwnedEntity() webhook: Webhook): Promise<WebhookSecretDto> {
    return { secret: await this.webhooks.rotateSecret(webhook) };
  }

  /**
   * Send a sample event.
   *
   * @remarks
   * Owner, or a `full` key. A sample event of `type` (default `webhook.test`; its `data.test` is true),
   * delivered to this endpoint like any other, even when the endpoint does not ask for that type.
   */
  @Post(':uuid/test')
  @HttpCode(200)
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Sample event queued')
  @ApiEnvelope(DeliveryQueuedDto)
  @ApiErrors(400)
  async test(
    @CallerCompany() company: Company,
    @OwnedEntity() webhook: Webhook,
    @Body() dto: TestWebhookDto,
  ): Promise<DeliveryQueuedDto> {
    return { deliveryUuid: await this.webhooks.test(webhook, company.uuid, dto.type ?? 'webhook.test') };
  }

  /**
   * List the endpoint's deliveries.
   *
   * @remarks
   * Owner, or a `read` or `full` key. Newest first, each with its last attempt; filtered by `status`, `type`
   * and the day they were made (`from`, `to`). Attempts are kept 30 days.
   */
  @Get(':uuid/deliveries')
  @OwnerAuth({ key: 'read' })
  @OwnedWebhook()
  @ResponseMessage('Deliveries fetched')
  @ApiEnvelope(DeliveryPageDto)
  @ApiErrors(400)
  deliveries(
    @OwnedEntity() webhook: Webhook,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<Page<DeliveryDto>> {
    return this.webhooks.listDeliveries(webhook, query);
  }

  /**
   * Read one delivery.
   *
   * @remarks
   * Owner, or a `read` or `full` key. With every attempt kept and the payload sent.
   */
  @Get(':uuid/deliveries/:deliveryUuid')
  @OwnerAuth({ key: 'read' })
  @OwnedWebhook()
  @ResponseMessage('Delivery fetched')
  @ApiEnvelope(DeliveryDetailDto)
  delivery(
    @OwnedEntity() webhook: Webhook,
    @Param('deliveryUuid', uuidPipe) deliveryUuid: string,
  ): Promise<DeliveryDetailDto> {
    return this.webhooks.delivery(webhook, deliveryUuid);
  }

  /**
   * Send one delivery again now.
   *
   * @remarks
   * Owner, or a `full` key. Whatever its status: a delivered one is sent again too (a replay), with the same
   * `webhook-id`.
   */
  @Post(':uuid/deliveries/:deliveryUuid/retry')
  @HttpCode(200)
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Delivery queued')
  @ApiEnvelope(DeliveryQueuedDto)
  async retry(
    @OwnedEntity() webhook: Webhook,
    @Param('deliveryUuid', uuidPipe) deliveryUuid: string,
  ): Promise<DeliveryQueuedDto> {
    return { deliveryUuid: await this.webhooks.retry(webhook, deliveryUuid) };
  }

  /**
   * Send again the deliveries of a window.
   *
   * @remarks
   * Owner, or a `full` key. Every delivery made between `from` and `to` (default now; at most 7 days) whose
   * status is `status` (default `failed`), at most 100,000, sent again now.
   */
  @Post(':uuid/replay')
  @HttpCode(200)
  @OwnerAuth({ key: 'write' })
  @OwnedWebhook()
  @ResponseMessage('Deliveries queued')
  @ApiEnvelope(ReplayQueuedDto)
  @ApiErrors(400)
  async replay(@OwnedEntity() webhook: Webhook, @Body() dto: ReplayDeliveriesDto): Promise<ReplayQueuedDto> {
    return { queued: await this.webhooks.replay(webhook, dto) };
  }
}
