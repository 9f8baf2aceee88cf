/** What a mail-provider webhook call gave (integrations.md "Mail provider delivery events"). */
export class ProviderEventsResultDto {
  /** New events, stored and applied to their clean record (or kept until their message is known). */
  accepted: number;
  /** Events already received (same provider event id, or the same raw event). */
  duplicates: number;
  /** Pings and events that could not be read; logged with the request id, never an error. */
  skipped: number;
}

/**
 * A Postmark event (one object with `RecordType`); SendGrid and SparkPost post arrays of events
 * (items with `event`, items with `msys`). Every field the provider sends is kept.
 */
export class ProviderEventPayloadDto {
  /** Postmark: `Delivery`, `Bounce`, `SpamComplaint`, `Open`, `Click`, `SubscriptionChange`. */
  RecordType?: string;
  /** SendGrid: `delivered`, `deferred`, `bounce`, `dropped`, `spamreport`, `open`, `click`, `unsubscribe`. */
  event?: string;
  /** SparkPost: the event under its class (`message_event`, `track_event`, …). */
  msys?: Record<string, unknown>;
}
