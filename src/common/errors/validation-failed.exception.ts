import { BadRequestException, ValidationError } from '@nestjs/common';
import type { FieldErrorDetail } from '../http/envelope';

/**
 * A 400 whose envelope lists the invalid fields (`error.details`): at most MAX_DETAILS of them,
 * and `omittedDetails` says how many more there were (README.md "Bodies").
 */
export class ValidationFailedException extends BadRequestException {
  static readonly MAX_DETAILS = 20;
  readonly details: FieldErrorDetail[];
  readonly omittedDetails: number;

  /** `count`: how many problems `details` stands for (more than it lists when it was cut short); `more` adds another exception's. */
  constructor(details: FieldErrorDetail[], count = details.length, more?: ValidationFailedException) {
    super('Validation failed');
    const all = more ? [...details, ...more.details] : details;
    this.details = all.slice(0, ValidationFailedException.MAX_DETAILS);
    this.omittedDetails =
      count + (more ? more.details.length + more.omittedDetails : 0) - this.details.length;
  }

  static fromErrors(errors: ValidationError[]): ValidationFailedException {
    return new ValidationFailedException(flatten(errors));
  }
}

function flatten(errors: ValidationError[], prefix = ''): FieldErrorDetail[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, messages: inReadingOrder(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/**
 * A field's messages, what it must be (`must be a string`, class-validator's `is…` checks) before
 * its bounds (`must be shorter than …`): class-validator lists them in the reverse order of the
 * decorators, which puts the bounds first.
 */
function inReadingOrder(constraints: Record<string, string>): string[] {
  const entries = Object.entries(constraints);
  const isKind = ([name]: [string, string]) => name.startsWith('is');
  return [...entries.filter(isKind), ...entries.filter((e) => !isKind(e))].map(([, message]) => message);
}
