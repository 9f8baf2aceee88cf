import { Foundation1763769600000 } from './1763769600000-foundation';
import { Commerce1763856000000 } from './1763856000000-commerce';
import { Suppression1763942400000 } from './1763942400000-suppression';
import { SpamReports1764028800000 } from './1764028800000-spam-reports';
import { PasswordChangedAt1764115200000 } from './1764115200000-password-changed-at';
import { Domains1764201600000 } from './1764201600000-domains';
import { DeliveryData1764288000000 } from './1764288000000-delivery-data';
import { MailboxSuitesAndCrm1764374400000 } from './1764374400000-mailbox-suites-and-crm';
import { ProviderEventIndexes1764460800000 } from './1764460800000-provider-event-indexes';
import { RelayAttribution1764547200000 } from './1764547200000-relay-attribution';
import { ChangeNotices1764633600000 } from './1764633600000-change-notices';
import { ProviderEventInbox1764720000000 } from './1764720000000-provider-event-inbox';
import { ApiKeys1764806400000 } from './1764806400000-api-keys';
import { Webhooks1764892800000 } from './1764892800000-webhooks';
import { WebhookClaimIndex1764979200000 } from './1764979200000-webhook-claim-index';
import { Emails1765065600000 } from './1765065600000-emails';
import { EmailRetriedRecipients1765152000000 } from './1765152000000-email-retried-recipients';
import { Deliverability1765238400000 } from './1765238400000-deliverability';
import { RollUpShards1765324800000 } from './1765324800000-roll-up-shards';
import { ProviderEventKeys1765411200000 } from './1765411200000-provider-event-keys';
import { PartialLookupIndexes1765497600000 } from './1765497600000-partial-lookup-indexes';

/** In order. Listed explicitly so the compiled app, ts-jest and the CLI all load the same set. */
export const MIGRATIONS = [
  Foundation1763769600000,
  Commerce1763856000000,
  Suppression1763942400000,
  SpamReports1764028800000,
  PasswordChangedAt1764115200000,
  Domains1764201600000,
  DeliveryData1764288000000,
  MailboxSuitesAndCrm1764374400000,
  ProviderEventIndexes1764460800000,
  RelayAttribution1764547200000,
  ChangeNotices1764633600000,
  ProviderEventInbox1764720000000,
  ApiKeys1764806400000,
  Webhooks1764892800000,
  WebhookClaimIndex1764979200000,
  Emails1765065600000,
  EmailRetriedRecipients1765152000000,
  Deliverability1765238400000,
  RollUpShards1765324800000,
  ProviderEventKeys1765411200000,
  PartialLookupIndexes1765497600000,
];
