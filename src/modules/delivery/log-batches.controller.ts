import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiTags } from '@nestjs/swagger';
import { InboundBody, InboundBodyValue } from '../../common/http/inbound-body.decorator';
import { BulkFeed, LargeBody } from '../../common/http/large-body';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { UseCredential } from '../auth/access.decorators';
import { IngestResultDto, ShippedLogBatchDto } from './dto/log-batch.dto';
import { LogBatchesService } from './log-batches.service';

@ApiTags('callbacks')
@Controller('api/v1/callback-raw-log')
export class LogBatchesController {
  constructor(private readonly ingest: LogBatchesService) {}

  /**
   * Receive raw Postfix logs from a log shipper.
   *
   * @remarks
   * For the log shipper (Fluent Bit, Vector, Logstash, curl), with the log shipper key in `x-api-key` or
   * `Authorization: Bearer`; 401 for a wrong key, 503 while LOG_SHIPPER_API_KEY is unset. Bodies up to 10 MB
   * after inflating, gzip accepted (a larger one is a 413): `application/json` (an array of records,
   * `{ "logs": [...] }` or one record, the line in `message`, `log` or `MESSAGE`), `application/x-ndjson`
   * (one record a line) or `text/plain` (syslog lines). Lines of one queue may arrive in any order and in
   * any batch. Lines that are not Postfix are counted as `skipped`, never an error. The same batch posted
   * again answers `records: 0` and counts nothing twice. 503 when the batch is stored but could not be
   * applied yet (the `retry-callbacks` job applies it).
   */
  @Post()
  @HttpCode(200)
  @UseCredential('log-shipper-key')
  @LargeBody()
  @BulkFeed()
  @ResponseMessage('Logs received')
  @ApiConsumes('application/json', 'application/x-ndjson', 'text/plain')
  @ApiBody({
    type: ShippedLogBatchDto,
    description:
      'JSON: `{ "logs": [...] }`, an array of records or one record; NDJSON: one record a line; text: syslog lines',
  })
  @ApiEnvelope(IngestResultDto)
  @ApiErrors(400, 413, 415)
  receive(
    @InboundBody({ json: 'object-or-array', text: true }) shipped: InboundBodyValue,
  ): Promise<IngestResultDto> {
    return this.ingest.ingest(shipped);
  }
}
