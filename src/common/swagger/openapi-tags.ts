/**
 * The tags of the OpenAPI document, in the order Swagger UI shows them. Every @ApiTags name of a
 * controller is declared here (Spectral's `operation-tag-defined`, run by `npm run lint:openapi`,
 * fails on one that is not).
 */
export const OPENAPI_TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'auth', description: 'Renewing and revoking refresh tokens, for users and admins alike.' },
  {
    name: 'users',
    description:
      'Customer accounts: sign-up, e-mail verification, login, password reset, accepting an ' +
      "invitation, and the signed-in user's own profile and password.",
  },
  {
    name: 'companies',
    description:
      "The caller's own company (`:companyUuid` must be it): profile, sending usage, SMTP relay " +
      'credentials, allowed IPs, and members with their invitations.',
  },
  {
    name: 'billings',
    description:
      "Buying packages: the packages on sale, the company's billings, payment proofs for manual " +
      'transfers, and cancelling an unpaid billing.',
  },
  { name: 'payment-gateway', description: 'Paying a pending billing through the payment gateway.' },
  {
    name: 'suppression',
    description: "The company's suppression list: addresses the relay will not send the company's mail to.",
  },
  {
    name: 'domains',
    description:
      "The company's sender domains: the DNS records to publish (ownership, SPF, DKIM, DMARC, return " +
      'path), live verification, and removal.',
  },
  {
    name: 'reports',
    description:
      "Delivery reports of the company's mail: summaries with rates, the clean log (one record per " +
      'message and recipient) with its CSV export, and per-domain and bounce breakdowns.',
  },
  {
    name: 'api keys',
    description:
      "The company's API keys for its own software (owner only): made, listed, renamed, restricted to " +
      'networks and domains, revoked. The secret is shown once.',
  },
  {
    name: 'webhooks',
    description:
      "The company's event webhooks: endpoints with their event and domain filters, signing secrets " +
      '(Standard Webhooks), sample events, the delivery history with every attempt, and replays.',
  },
  {
    name: 'emails',
    description:
      'Sending by HTTP: messages composed by the service (or given whole) and handed to the relay ' +
      'like SMTP mail, judged first by the relay rule, with Idempotency-Key, batches, scheduling, ' +
      'and each message read back with its recipients from the clean records.',
  },
  { name: 'notifications', description: "The signed-in user's notifications." },
  {
    name: 'admins',
    description:
      "Admin accounts: login, password reset, the admin's own profile, and (superAdmin) managing " +
      'admins and reading the roles.',
  },
  { name: 'admin users', description: 'Customer users across all companies, for admins.' },
  { name: 'admin api keys', description: "A company's API keys, for admins: listed and revoked." },
  {
    name: 'admin companies',
    description:
      'Customer companies, for admins: reading them, and changing status, quota, period and ' +
      'package, script tokens and relay passwords.',
  },
  { name: 'admin packages', description: 'The catalogue of packages (sending quotas and prices).' },
  {
    name: 'admin billings',
    description: 'Billings of every company: review of payment proofs, approval, rejection, refunds.',
  },
  {
    name: 'admin domains',
    description: 'Sender domains of every company: reading, verifying and removing them.',
  },
  {
    name: 'admin reports',
    description:
      'Platform-wide reports for admins: delivery summaries, the clean log of every company, per-company ranking, revenue.',
  },
  {
    name: 'admin suppression',
    description: 'Suppression entries of any company, and the global list that applies to every company.',
  },
  {
    name: 'admin notifications',
    description: "The signed-in admin's notifications, and broadcasts to companies.",
  },
  {
    name: 'mailbox-suites',
    description:
      "Relaying from Microsoft 365 or Google Workspace: the company's choice, and its personalised setup script behind a secret URL.",
  },
  {
    name: 'crm',
    description:
      'The CRM link: an admin connects the CRM (OAuth 2.0), and companies with their owners are upserted into it as Accounts and Contacts.',
  },
  { name: 'jobs', description: 'Running the scheduled jobs on demand (superAdmin).' },
  {
    name: 'internal',
    description: "Routes for the platform's own systems, behind the internal API key (`x-api-key`).",
  },
  {
    name: 'callbacks',
    description: 'Webhooks of outside systems, each behind its own machine credential.',
  },
  { name: 'health', description: 'Liveness and readiness probes; public and not rate limited.' },
  {
    name: 'metrics',
    description: 'Prometheus metrics of the process, for METRICS_TOKEN (or loopback while it is unset).',
  },
];
