/** What a log batch gave (integrations.md "Log shipper"). */
export class IngestResultDto {
  /** Entries received: lines of a text or NDJSON body, records of a JSON body. */
  accepted: number;
  /** Entries that are a Postfix line of a form the clean log is built from (`removed` included). */
  parsed: number;
  /** Entries that are not Postfix or not understood; never an error. */
  skipped: number;
  /** Clean records created or changed; 0 when the same batch is posted again. */
  records: number;
}

/** One record of a JSON body (Fluent Bit, Vector, Logstash): the syslog line and, optionally, its host and time. */
export class ShippedLogRecordDto {
  /** The syslog line (or `log`, or `MESSAGE`). */
  message?: string;
  log?: string;
  MESSAGE?: string;
  /** The host the line came from (or `hostname`); else the line's own host. */
  host?: string;
  hostname?: string;
  /** ISO 8601 or epoch seconds (or `@timestamp`, `date`, `time`); else the line's own syslog time. */
  timestamp?: string;
}

/**
 * The `{ "logs": [...] }` form of a JSON body; an array of records and one record alone are taken too.
 * `application/x-ndjson` bodies carry one record a line, `text/plain` bodies one syslog line a line.
 */
export class ShippedLogBatchDto {
  logs: ShippedLogRecordDto[];
}
