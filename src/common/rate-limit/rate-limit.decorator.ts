import { SetMetadata } from '@nestjs/common';

export const RATE_LIMIT_POLICY = 'rate-limit:policy';

/**
 * `login`: LOGIN_RATE_LIMIT_PER_MINUTE per IP and e-mail; `email-per-hour`: EMAIL_RATE_LIMIT_PER_HOUR
 * per e-mail (forgot-password, resend-verification). Both come on top of the general per-IP limit.
 */
export type RateLimitPolicy = 'login' | 'email-per-hour';

export const RateLimit = (policy: RateLimitPolicy) => SetMetadata(RATE_LIMIT_POLICY, policy);

/** Not counted by the general per-IP limit (health probes). */
export const SKIP_GENERAL_RATE_LIMIT = 'rate-limit:skip-general';
export const SkipGeneralRateLimit = () => SetMetadata(SKIP_GENERAL_RATE_LIMIT, true);
