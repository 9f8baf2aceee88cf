import { BadRequestException, ValidationError } from '@nestjs/common';
import type { FieldErrorDetail } from '../http/envelope';

/** A 400 whose envelope lists each invalid field (`error.details`). */
export class ValidationFailedException extends BadRequestException {
  constructor(readonly details: FieldErrorDetail[]) {
    super('Validation failed');
  }

  static fromErrors(errors: ValidationError[]): ValidationFailedException {
    return new ValidationFailedException(flatten(errors));
  }
}

function flatten(errors: ValidationError[], prefix = ''): FieldErrorDetail[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, messages: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}
