import { BadRequestException } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { LogPosition } from '../log-index/clean-record';

/**
 * The opaque `cursor` of the clean log's pages: the last record's position (time and id),
 * signed with a key derived from ENCRYPTION_KEY, so a cursor that was altered or made up is a
 * 400 rather than a silently different page.
 */
export class LogCursors {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('clean-log-cursor').digest();
  }

  encode(position: LogPosition): string {
    const body = Buffer.from(`${position.at.getTime()}.${position.id}`).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode(cursor: string): LogPosition {
    const [body, mac, extra] = cursor.split('.');
    const expected = body ? this.sign(body) : '';
    if (!body || !mac || extra !== undefined || mac.length !== expected.length) throw invalid();
    if (!timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) throw invalid();
    const m = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(Buffer.from(body, 'base64url').toString());
    if (!m) throw invalid();
    return { at: new Date(Number(m[1])), id: m[2] };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url').slice(0, 22);
  }
}

const invalid = () =>
  new BadRequestException('cursor is not valid (pass meta.nextCursor of the previous page)');
