import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Between, FindOptionsWhere, In, LessThan, MoreThanOrEqual, Repository } from 'typeorm';
import { EncryptionService } from '../../common/crypto/encryption.service';
import { BadRequestError, ConflictError, NotFoundError } from '../../common/errors/domain-error';
import { Page, skipFor, toPage } from '../../common/pagination/page';
import { DAY_MS, toDateWindow } from '../../common/validation/date-filter';
import { AppConfig } from '../../config/app-config';
import { SqlDialect } from '../../database/sql-dialect';
import { TransactionService } from '../../database/transaction.service';
import { DomainsService } from '../domains/domains.service';
import { checkWebhookUrl } from './delivery/webhook-target';
import { newWebhookSecret } from './delivery/webhook-signing';
import {
  CreateWebhookDto,
  ListDeliveriesQueryDto,
  ReplayDeliveriesDto,
  UpdateWebhookDto,
} from './dto/webhook-requests.dto';
import {
  AttemptDto,
  CreatedWebhookDto,
  DeliveryDetailDto,
  DeliveryDto,
  WebhookDetailDto,
  WebhookDto,
} from './dto/webhook-response.dto';
import { WebhookAttempt } from './entities/webhook-attempt.entity';
import { DeliveryStatus, WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookEvent } from './entities/webhook-event.entity';
import { Webhook } from './entities/webhook.entity';
import { WebhookEventType } from './webhook-event-types';
import { newEventId, WebhookWork } from './webhook-outbox';
import { sampleEventData } from './webhook-samples';

/** Endpoints a company may have. */
export const MAX_WEBHOOKS_PER_COMPANY = 10;
export const WEBHOOK_NOT_FOUND = 'Webhook not found';
export const DELIVERY_NOT_FOUND = 'Delivery not found';
/** After a rotation the old secret signs beside the new one this long. */
export const OLD_SECRET_SIGNS_MS = DAY_MS;
/** A replay's window and size (platform.md "Routes"). */
const MAX_REPLAY_WINDOW_MS = 7 * DAY_MS;
const MAX_REPLAY_DELIVERIES = 100_000;

type CompanyRef = { id: number; uuid: string };

/** A company's event webhooks (platform.md "Event webhooks"): endpoints, secrets, deliveries, replays. */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectRepository(Webhook) private readonly webhooks: Repository<Webhook>,
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly transactions: TransactionService,
    private readonly dialect: SqlDialect,
    private readonly encryption: EncryptionService,
    private readonly config: AppConfig,
    private readonly domains: DomainsService,
    private readonly work: WebhookWork,
  ) {}

  async create(company: CompanyRef, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    const url = await this.checkedUrl(dto.url);
    const domains = await this.domains.companyDomainsAmong(company.id, dto.domains ?? []);
    const secret = newWebhookSecret();
    const webhook = this.webhooks.create({
      companyId: company.id,
      url,
      description: dto.description?.trim() || null,
      events: [...new Set(dto.events)],
      domains,
      enabled: true,
      disabledReason: null,
      secret: this.encryption.encrypt(secret),
      previousSecret: null,
      previousSecretUntil: null,
      lastSuccessAt: null,
      lastFailureAt: null,
      failingSince: null,
    });
    await this.transactions.run(async (em) => {
      await this.dialect.lockName(em, `webhooks-of-company:${company.id}`);
      if ((await em.countBy(Webhook, { companyId: company.id })) >= MAX_WEBHOOKS_PER_COMPANY) {
        throw new ConflictError(
          `Webhook limit reached: a company has at most ${MAX_WEBHOOKS_PER_COMPANY} webhooks`,
        );
      }
      await em.save(webhook);
    });
    const saved = await this.webhooks.findOneByOrFail({ id: webhook.id });
    return { webhook: WebhookDto.from(saved, company.uuid), secret };
  }

  async list(company: CompanyRef, page: number, limit: number): Promise<Page<WebhookDto>> {
    const [items, total] = await this.webhooks.findAndCount({
      where: { companyId: company.id },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: skipFor(page, limit),
      take: limit,
    });
    return toPage(
      items.map((w) => WebhookDto.from(w, company.uuid)),
      total,
      page,
      limit,
    );
  }

  /** The endpoint with its deliveries of the last 24 hours, by status. */
  async view(webhook: Webhook, companyUuid: string): Promise<WebhookDetailDto> {
    const rows: Array<{ status: DeliveryStatus; n: string | number }> = await this.deliveries
      .createQueryBuilder('d')
      .select('d.status', 'status')
      .addSelect('COUNT(*)', 'n')
      .where({ webhookId: webhook.id, createdAt: MoreThanOrEqual(new Date(Date.now() - DAY_MS)) })
      .groupBy('d.status')
      .getRawMany();
    const last24h = { delivered: 0, failed: 0, pending: 0 };
    for (const row of rows) last24h[row.status] = Number(row.n);
    return { ...WebhookDto.from(webhook, companyUuid), last24h };
  }

  async update(webhook: Webhook, companyUuid: string, dto: UpdateWebhookDto): Promise<WebhookDto> {
    const changes: Partial<Webhook> = {};
    if (dto.url !== undefined) changes.url = await this.checkedUrl(dto.url);
    if (dto.events !== undefined) changes.events = [...new Set(dto.events)];
    if (dto.domains !== undefined)
      changes.domains = await this.domains.companyDomainsAmong(webhook.companyId, dto.domains);
    if (dto.description !== undefined) changes.description = dto.description?.trim() || null;
    if (dto.enabled === true && !webhook.enabled) {
      Object.assign(changes, { enabled: true, disabledReason: null, failingSince: null });
    } else if (dto.enabled === false && webhook.enabled) {
      Object.assign(changes, { enabled: false, disabledReason: 'manual' });
    }
    if (Object.keys(changes).length) await this.webhooks.update({ id: webhook.id }, changes);
    if (changes.enabled) this.work.emit({ events: 0 });
    return WebhookDto.from(await this.webhooks.findOneByOrFail({ id: webhook.id }), companyUuid);
  }

  /** Deletes the endpoint; its deliveries (pending ones included) and their attempts go with it. */
  async remove(webhook: Webhook): Promise<void> {
    await this.webhooks.delete({ id: webhook.id });
  }

  async secret(webhook: Webhook): Promise<string> {
    const row = await this.webhooks
      .createQueryBuilder('w')
      .addSelect('w.secret')
      .where({ id: webhook.id })
      .getOneOrFail();
    return this.encryption.decrypt(row.secret);
  }

  /** A new secret; the old one signs beside it for OLD_SECRET_SIGNS_MS. */
  async rotateSecret(webhook: Webhook): Promise<string> {
    const secret = newWebhookSecret();
    await this.transactions.run(async (em) => {
      const current = await em
        .createQueryBuilder(Webhook, 'w')
        .addSelect('w.secret')
        .where({ id: webhook.id })
        .getOneOrFail();
      await em.update(
        Webhook,
        { id: webhook.id },
        {
          secret: this.encryption.encrypt(secret),
          previousSecret: current.secret,
          previousSecretUntil: new Date(Date.now() + OLD_SECRET_SIGNS_MS),
        },
      );
    });
    return secret;
  }

  /** A sample event of `type` for this endpoint alone, delivered like any other. */
  async test(webhook: Webhook, companyUuid: string, type: WebhookEventType): Promise<string> {
    const now = new Date();
    const deliveryUuid = randomUUID();
    await this.transactions.run(async (em, scope) => {
      const event = em.create(WebhookEvent, {
        eventId: newEventId(),
        companyId: webhook.companyId,
        type,
        payload: JSON.stringify({
          type,
          timestamp: now.toISOString(),
          data: sampleEventData(type, companyUuid),
        }),
        recordId: null,
        seq: null,
        factKey: null,
      });
      await em.save(event);
      await em.save(
        em.create(WebhookDelivery, {
          uuid: deliveryUuid,
          webhookId: webhook.id,
          eventId: event.id,
          type,
          status: 'pending',
          attempts: 0,
          nextAttemptAt: now,
        }),
      );
      scope.afterCommit(() => this.work.emit({ events: 1 }));
    });
    return deliveryUuid;
  }

  async listDeliveries(webhook: Webhook, query: ListDeliveriesQueryDto): Promise<Page<DeliveryDto>> {
    const window = toDateWindow(query.from, query.to);
    const where: FindOptionsWhere<WebhookDelivery> = { webhookId: webhook.id };
    if (query.status) where.status = query.status;
    if (query.type) where.type = query.type;
    if (window.from && window.toExclusive)
      where.createdAt = Between(window.from, new Date(window.toExclusive.getTime() - 1));
    else if (window.from) where.createdAt = MoreThanOrEqual(window.from);
    else if (window.toExclusive) where.createdAt = LessThan(window.toExclusive);
    const [items, total] = await this.deliveries.findAndCount({
      where,
      relations: { event: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: skipFor(query.page, query.limit),
      take: query.limit,
    });
    return toPage(
      items.map((d) => DeliveryDto.from(d, d.event.eventId)),
      total,
      query.page,
      query.limit,
    );
  }

  async delivery(webhook: Webhook, deliveryUuid: string): Promise<DeliveryDetailDto> {
    const delivery = await this.ownDelivery(webhook, deliveryUuid);
    const attempts = await this.deliveries.manager.find(WebhookAttempt, {
      where: { deliveryId: delivery.id },
      order: { at: 'ASC', id: 'ASC' },
    });
    return {
      ...DeliveryDto.from(delivery, delivery.event.eventId),
      attemptHistory: attempts.map((a) => AttemptDto.from(a)),
      payload: JSON.parse(delivery.event.payload) as Record<string, unknown>,
    };
  }

  /**
   * Sends one delivery again now, whatever its status (a delivered one too: a replay). An attempt
   * still in flight loses its claim: its outcome is kept in the history, and this one decides.
   */
  async retry(webhook: Webhook, deliveryUuid: string): Promise<string> {
    const delivery = await this.ownDelivery(webhook, deliveryUuid);
    await this.deliveries.update(
      { id: delivery.id },
      { status: 'pending', nextAttemptAt: new Date(), claim: null },
    );
    this.work.emit({ events: 1 });
    return delivery.uuid;
  }

  /** Sends again every delivery of the window with that status (at most 7 days, 100,000 deliveries). */
  async replay(webhook: Webhook, dto: ReplayDeliveriesDto): Promise<number> {
    const window = toDateWindow(dto.from, dto.to);
    const from = window.from!;
    const toExclusive = window.toExclusive ?? new Date();
    if (toExclusive.getTime() - from.getTime() > MAX_REPLAY_WINDOW_MS) {
      throw new BadRequestError('The replay window is at most 7 days');
    }
    const where = {
      webhookId: webhook.id,
      status: dto.status ?? 'failed',
      createdAt: Between(from, new Date(toExclusive.getTime() - 1)),
    };
    const matching = await this.deliveries.count({ where });
    if (matching > MAX_REPLAY_DELIVERIES) {
      throw new BadRequestError(
        `The replay would send ${matching} deliveries: at most ${MAX_REPLAY_DELIVERIES} at once`,
      );
    }
    const ids = (await this.deliveries.find({ where, select: { id: true } })).map((d) => d.id);
    const now = new Date();
    for (let i = 0; i < ids.length; i += 1000) {
      await this.deliveries.update(
        { id: In(ids.slice(i, i + 1000)) },
        { status: 'pending', nextAttemptAt: now, claim: null },
      );
    }
    if (ids.length) this.work.emit({ events: ids.length });
    return ids.length;
  }

  private async ownDelivery(webhook: Webhook, deliveryUuid: string): Promise<WebhookDelivery> {
    const delivery = await this.deliveries.findOne({
      where: { uuid: deliveryUuid, webhookId: webhook.id },
      relations: { event: true },
    });
    if (!delivery) throw new NotFoundError(DELIVERY_NOT_FOUND);
    return delivery;
  }

  /** The URL as given, once it passes the rules (400 naming the rule it breaks). */
  private async checkedUrl(url: string): Promise<string> {
    const checked = await checkWebhookUrl(url, {
      allowHttp: this.config.webhookAllowHttp,
      allowPrivateTargets: this.config.env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    });
    if (!checked.ok) throw new BadRequestError(checked.reason);
    return url;
  }
}
