import { Body, Controller, Delete, Get, Headers, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DomainError } from '../../common/errors/domain-error';
import { LargeBody } from '../../common/http/large-body';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import type { ApiKey } from '../api-keys/entities/api-key.entity';
import { CallerApiKey, CallerCompany, UserAuth } from '../auth/access.decorators';
import { OwnedEntity, OwnedResource } from '../auth/guards/company-ownership.guard';
import type { Company } from '../companies/entities/company.entity';
import {
  ListEmailsQueryDto,
  SendEmailBatchDto,
  SendEmailDto,
  SendRawEmailDto,
} from './dto/email-requests.dto';
import {
  BatchItemDto,
  EmailDetailDto,
  EmailDto,
  EmailPageDto,
  SentBatchDto,
  SentEmailDto,
} from './dto/email-responses.dto';
import { EMAIL_NOT_FOUND, EmailsService } from './emails.service';
import { Email } from './entities/email.entity';
import { IdempotencyKeys, IdempotentAnswer } from './idempotency-keys';

/** Bodies of the sending routes: 5 MB of text, 5 of HTML and 10 MB of attachments (base64) fit; a raw message of 25 MB (base64). */
const MESSAGE_BODY_BYTES = 40 * 1024 * 1024;
const BATCH_BODY_BYTES = 50 * 1024 * 1024;

const IdempotencyKeyHeader = () =>
  ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      '1 to 256 printable characters, kept 24 hours per company: the same key with the same body answers the first answer again (200) and sends nothing twice; with another body 409; while the first is still handled 409.',
  });

@ApiTags('emails')
@Controller('api/v1/emails')
export class EmailsController {
  constructor(
    private readonly emails: EmailsService,
    private readonly idempotency: IdempotencyKeys,
  ) {}

  /**
   * Send a message.
   *
   * @remarks
   * A user of the company, or a `sending` or `full` key. Judged before anything is stored, with the relay's own
   * rule: the `from` domain must be a verified domain of the company (and one of a key's `domains`), else 422
   * (403 for a key's domains); a suspended company 403; no quota left 429 with `retry-after`. A recipient on the
   * suppression list comes back in `rejected` and the others go on (all of them suppressed: 422). 202 means
   * stored: the message is handed to the relay (Postfix, authenticated as the company) and goes the way SMTP
   * mail goes: DKIM, clean records, reports and webhooks, which carry its `id` as `emailId`, its tags and metadata.
   */
  @Post()
  @HttpCode(202)
  @UserAuth({ key: 'sending' })
  @LargeBody(MESSAGE_BODY_BYTES)
  @IdempotencyKeyHeader()
  @ResponseMessage('Email accepted')
  @ApiEnvelope(SentEmailDto, 202, 'Stored: it leaves now, or at `scheduledAt`')
  @ApiEnvelope(SentEmailDto, 200, 'The first answer to this Idempotency-Key, given again')
  @ApiErrors(400, 409, 413, 422, 429, 503)
  async send(
    @CallerCompany() company: Company,
    @CallerApiKey() apiKey: ApiKey | null,
    @Body() dto: SendEmailDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SentEmailDto> {
    this.emails.requireRelay();
    const sender = { company, apiKey };
    return answer(
      reply,
      await this.idempotency.run<SentEmailDto>(
        company.id,
        key,
        { route: 'send', body: dto },
        async (keep) => {
          const judged = await this.emails.judgeMessage(sender, dto);
          await this.emails.store([judged], keep && ((em) => keep(em, judged.answer)));
          return { status: 202, data: judged.answer };
        },
      ),
    );
  }

  /**
   * Send up to 100 messages.
   *
   * @remarks
   * As `POST /api/v1/emails`, each message judged on its own: an item has the message's answer, or its `error`
   * (`code` and `msg` as the single route would answer). A body that is not valid as a whole is a 400.
   */
  @Post('batch')
  @HttpCode(202)
  @UserAuth({ key: 'sending' })
  @LargeBody(BATCH_BODY_BYTES)
  @IdempotencyKeyHeader()
  @ResponseMessage('Emails accepted')
  @ApiEnvelope(SentBatchDto, 202, 'Each message stored or refused')
  @ApiEnvelope(SentBatchDto, 200, 'The first answer to this Idempotency-Key, given again')
  @ApiErrors(400, 409, 413, 503)
  async sendBatch(
    @CallerCompany() company: Company,
    @CallerApiKey() apiKey: ApiKey | null,
    @Body() dto: SendEmailBatchDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SentBatchDto> {
    this.emails.requireRelay();
    const sender = { company, apiKey };
    return answer(
      reply,
      await this.idempotency.run<SentBatchDto>(
        company.id,
        key,
        { route: 'batch', body: dto },
        async (keep) => {
          const now = new Date();
          const items: BatchItemDto[] = [];
          const judged = [];
          for (const [index, message] of dto.messages.entries()) {
            try {
              const one = await this.emails.judgeMessage(sender, message, now);
              judged.push(one);
              items.push({ index, ...one.answer });
            } catch (e: unknown) {
              if (!(e instanceof DomainError)) throw e;
              items.push({ index, error: { code: e.status, msg: e.message } });
            }
          }
          const data = { items };
          await this.emails.store(judged, keep && ((em) => keep(em, data)));
          return { status: 202, data };
        },
      ),
    );
  }

  /**
   * Send a complete RFC 5322 message.
   *
   * @remarks
   * A user of the company, or a `sending` or `full` key. `from` and `to` are the envelope (MAIL FROM, RCPT TO);
   * `raw` the message, base64, at most 25 MB decoded, sent as it is (a `Message-ID` is added when it has none).
   * Judged as `POST /api/v1/emails` judges, by the envelope sender's domain.
   */
  @Post('raw')
  @HttpCode(202)
  @UserAuth({ key: 'sending' })
  @LargeBody(MESSAGE_BODY_BYTES)
  @IdempotencyKeyHeader()
  @ResponseMessage('Email accepted')
  @ApiEnvelope(SentEmailDto, 202, 'Stored: it leaves now')
  @ApiEnvelope(SentEmailDto, 200, 'The first answer to this Idempotency-Key, given again')
  @ApiErrors(400, 409, 413, 422, 429, 503)
  async sendRaw(
    @CallerCompany() company: Company,
    @CallerApiKey() apiKey: ApiKey | null,
    @Body() dto: SendRawEmailDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SentEmailDto> {
    this.emails.requireRelay();
    const sender = { company, apiKey };
    return answer(
      reply,
      await this.idempotency.run<SentEmailDto>(company.id, key, { route: 'raw', body: dto }, async (keep) => {
        const judged = await this.emails.judgeRaw(sender, dto);
        await this.emails.store([judged], keep && ((em) => keep(em, judged.answer)));
        return { status: 202, data: judged.answer };
      }),
    );
  }

  /**
   * List the messages sent by HTTP.
   *
   * @remarks
   * A user of the company, or a `read` or `full` key. Newest first; `from`/`to` bound when they were sent,
   * `tag` is `name:value`.
   */
  @Get()
  @UserAuth({ key: 'read' })
  @ResponseMessage('Emails fetched')
  @ApiEnvelope(EmailPageDto)
  @ApiErrors(400)
  list(@CallerCompany() company: Company, @Query() query: ListEmailsQueryDto): Promise<Page<EmailDto>> {
    return this.emails.list(company, query);
  }

  /**
   * Read a message sent by HTTP.
   *
   * @remarks
   * A user of the company, or any key of it. Its recipients' state comes from their clean records once the relay
   * took it (`sent`, `bounced`, …); before that `queued`, or `rejected` / `failed` with the reason.
   */
  @Get(':id')
  @UserAuth({ key: 'any' })
  @OwnedResource(Email, EMAIL_NOT_FOUND, { param: 'id' })
  @ResponseMessage('Email fetched')
  @ApiEnvelope(EmailDetailDto)
  view(@OwnedEntity('id') email: Email): Promise<EmailDetailDto> {
    return this.emails.view(email);
  }

  /**
   * Cancel a scheduled message.
   *
   * @remarks
   * A user of the company, or a `sending` or `full` key. 409 once it left the queue.
   */
  @Delete(':id')
  @UserAuth({ key: 'sending' })
  @OwnedResource(Email, EMAIL_NOT_FOUND, { param: 'id' })
  @ResponseMessage('Email canceled')
  @ApiEnvelope()
  @ApiErrors(409)
  async cancel(@OwnedEntity('id') email: Email): Promise<object> {
    await this.emails.cancel(email);
    return {};
  }
}

/** The data of an answer, with its status (202, or 200 for an answer given again). */
function answer<T>(reply: FastifyReply, given: IdempotentAnswer<T>): T {
  void reply.status(given.status);
  return given.data;
}
