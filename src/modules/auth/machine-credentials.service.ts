import { Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { ServiceNotConfiguredError } from '../../common/errors/domain-error';
import { ExpectedSecret } from '../../common/secrets';
import type { MachineCredential } from './access';

interface KeyCredential {
  what: string;
  secret: ExpectedSecret | undefined;
  header: string;
  bearerAllowed: boolean;
}

/**
 * The shared-secret credentials of auth.md (API keys and the payment callback token). Each
 * comparison is timing-safe, and an unset secret refuses everything with 503.
 */
@Injectable()
export class MachineCredentialsService {
  private readonly credentials: Record<Exclude<MachineCredential, 'basic'>, KeyCredential>;

  constructor(config: AppConfig) {
    const env = config.env;
    this.credentials = {
      'api-key': {
        what: 'Internal API key',
        secret: expected(env.INTERNAL_API_KEY),
        header: 'x-api-key',
        bearerAllowed: true,
      },
      'log-shipper-key': {
        what: 'Log shipper API key',
        secret: expected(env.LOG_SHIPPER_API_KEY),
        header: 'x-api-key',
        bearerAllowed: true,
      },
      'callback-token': {
        what: 'Payment callback token',
        secret: expected(env.PAYMENT_CALLBACK_TOKEN),
        header: 'x-callback-token',
        bearerAllowed: false,
      },
    };
  }

  check(credential: Exclude<MachineCredential, 'basic'>, request: FastifyRequest): void {
    const { what, secret, header, bearerAllowed } = this.credentials[credential];
    if (!secret) throw new ServiceNotConfiguredError(what);
    const given = presented(request, header, bearerAllowed);
    if (given === undefined || !secret.matches(given)) {
      throw new UnauthorizedException(`Missing or invalid ${what.charAt(0).toLowerCase()}${what.slice(1)}`);
    }
  }
}

const expected = (secret: string | undefined) => (secret ? new ExpectedSecret(secret) : undefined);

function presented(request: FastifyRequest, header: string, bearerAllowed: boolean): string | undefined {
  const value = request.headers[header];
  if (typeof value === 'string' && value) return value;
  if (bearerAllowed) {
    const auth = request.headers.authorization;
    if (auth && /^Bearer /i.test(auth)) return auth.slice(7).trim();
  }
  return undefined;
}
