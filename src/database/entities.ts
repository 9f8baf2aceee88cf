import { ApiKey } from '../modules/api-keys/entities/api-key.entity';
import { Email } from '../modules/emails/entities/email.entity';
import { IdempotencyKey } from '../modules/emails/entities/idempotency-key.entity';
import { WebhookAttempt } from '../modules/webhooks/entities/webhook-attempt.entity';
import { WebhookDelivery } from '../modules/webhooks/entities/webhook-delivery.entity';
import { WebhookEvent } from '../modules/webhooks/entities/webhook-event.entity';
import { Webhook } from '../modules/webhooks/entities/webhook.entity';
import { AdminRole } from '../modules/admins/entities/admin-role.entity';
import { Admin } from '../modules/admins/entities/admin.entity';
import { RevokedRefreshToken } from '../modules/auth/entities/revoked-refresh-token.entity';
import { Billing } from '../modules/billings/entities/billing.entity';
import { PaymentEvent } from '../modules/billings/entities/payment-event.entity';
import { CompanyAuditEvent } from '../modules/companies/entities/company-audit-event.entity';
import { CompanyUsageDay } from '../modules/companies/entities/company-usage-day.entity';
import { Company } from '../modules/companies/entities/company.entity';
import { CrmConnection } from '../modules/crm/entities/crm-connection.entity';
import { CrmOAuthState } from '../modules/crm/entities/crm-oauth-state.entity';
import { CrmOutboxEntry } from '../modules/crm/entities/crm-outbox-entry.entity';
import { Domain } from '../modules/domains/entities/domain.entity';
import { CleanLogDay } from '../modules/log-index/entities/clean-log-day.entity';
import { CleanLog } from '../modules/log-index/entities/clean-log.entity';
import { LogBatch } from '../modules/delivery/entities/log-batch.entity';
import { PostfixDelivery } from '../modules/delivery/entities/postfix-delivery.entity';
import { PostfixQueue } from '../modules/delivery/entities/postfix-queue.entity';
import { QuotaCountedRecord } from '../modules/delivery/entities/quota-counted-record.entity';
import { Notification } from '../modules/notifications/entities/notification.entity';
import { BounceSample } from '../modules/deliverability/entities/bounce-sample.entity';
import { DeliverabilityAlert } from '../modules/deliverability/entities/deliverability-alert.entity';
import { DeliverabilityHour } from '../modules/deliverability/entities/deliverability-hour.entity';
import { Package } from '../modules/packages/entities/package.entity';
import { ProviderEvent } from '../modules/delivery/entities/provider-event.entity';
import { SpamReport } from '../modules/spam-reports/entities/spam-report.entity';
import { SuppressionEntry } from '../modules/suppression/entities/suppression-entry.entity';
import { Contact } from '../modules/users/entities/contact.entity';
import { User } from '../modules/users/entities/user.entity';

/** Every entity, for the data source (the app and the TypeORM CLI share it). */
export const ENTITIES = [
  AdminRole,
  Admin,
  Company,
  ApiKey,
  Webhook,
  WebhookEvent,
  WebhookDelivery,
  WebhookAttempt,
  Email,
  IdempotencyKey,
  CompanyUsageDay,
  CompanyAuditEvent,
  Contact,
  User,
  RevokedRefreshToken,
  Package,
  Billing,
  PaymentEvent,
  Notification,
  SuppressionEntry,
  SpamReport,
  Domain,
  LogBatch,
  PostfixQueue,
  PostfixDelivery,
  QuotaCountedRecord,
  ProviderEvent,
  CleanLog,
  CleanLogDay,
  DeliverabilityHour,
  BounceSample,
  DeliverabilityAlert,
  CrmConnection,
  CrmOAuthState,
  CrmOutboxEntry,
];
