import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { map, Observable } from 'rxjs';
import type { SuccessEnvelope } from './envelope';
import { RAW_RESPONSE, RESPONSE_MESSAGE } from './response-message.decorator';

interface HandlerEnvelopeSettings {
  raw: boolean;
  msg: string;
}

/**
 * Wraps what a handler returns in the success envelope. The per-handler settings are read
 * from metadata once and cached, so the per-request cost is one WeakMap lookup and one object.
 */
@Injectable()
export class ResponseEnvelopeInterceptor implements NestInterceptor {
  private readonly settings = new WeakMap<object, HandlerEnvelopeSettings>();

  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const { raw, msg } = this.settingsFor(context);
    if (raw) return next.handle();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((data: unknown): SuccessEnvelope => ({
        status: 'success',
        code: reply.statusCode,
        msg,
        data: data ?? {},
      })),
    );
  }

  private settingsFor(context: ExecutionContext): HandlerEnvelopeSettings {
    const handler = context.getHandler();
    let found = this.settings.get(handler);
    if (!found) {
      const targets = [handler, context.getClass()];
      found = {
        raw: this.reflector.getAllAndOverride<boolean>(RAW_RESPONSE, targets) ?? false,
        msg: this.reflector.getAllAndOverride<string>(RESPONSE_MESSAGE, targets) ?? 'OK',
      };
      this.settings.set(handler, found);
    }
    return found;
  }
}
