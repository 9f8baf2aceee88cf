import { BadRequestException, PipeTransform } from '@nestjs/common';

/** A clean record's id: 64 lower-case hex digits (SHA-256); anything else is a 400. */
export class LogIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[0-9a-f]{64}$/.test(value))
      throw new BadRequestException('id must be a log record id (64 hex digits)');
    return value;
  }
}
