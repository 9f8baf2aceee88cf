import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { BasicStrategy } from 'passport-http';
import { AppConfig } from '../../../config/app-config';
import { matchesAnySecret } from '../../../common/secrets';

/**
 * HTTP Basic for the mail provider's webhook. MAIL_PROVIDER_WEBHOOK_USER/PASSWORD, or a
 * comma-separated list of `user:password` pairs in MAIL_PROVIDER_WEBHOOK_PASSWORD for rotation.
 */
@Injectable()
export class MailProviderBasicStrategy extends PassportStrategy(BasicStrategy, 'mail-provider-basic') {
  private readonly pairs: string[];

  constructor(config: AppConfig) {
    super({ realm: 'mail-provider' });
    this.pairs = mailProviderPairs(config);
  }

  validate(username: string, password: string): { machine: 'mail-provider' } | false {
    return matchesAnySecret(`${username}:${password}`, this.pairs) ? { machine: 'mail-provider' } : false;
  }
}

/**
 * The accepted `user:password` pairs: always USER:PASSWORD; and when PASSWORD is a comma-separated
 * list whose every item is itself `user:password`, each of those too (old and new during a rotation).
 */
export function mailProviderPairs(config: AppConfig): string[] {
  const user = config.env.MAIL_PROVIDER_WEBHOOK_USER;
  const password = config.env.MAIL_PROVIDER_WEBHOOK_PASSWORD;
  if (!user || !password) return [];
  const items = password.split(',').map((p) => p.trim());
  const rotation = items.length > 1 && items.every((p) => /^[^:]+:.+$/.test(p)) ? items : [];
  return [`${user}:${password}`, ...rotation];
}
