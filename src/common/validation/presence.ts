import { IsOptional, ValidateIf } from 'class-validator';

/**
 * The field may be left out of the body. `null` is not "left out": it is validated like any
 * other value, so the field's own checks refuse it with a 400 that names the field. The
 * default for optional fields (class-validator's IsOptional would let `null` through to the
 * database).
 */
export const Omittable = (): PropertyDecorator =>
  ValidateIf((_object: unknown, value: unknown) => value !== undefined);

/** The field may be left out, or `null` to clear it (the column is nullable). */
export const Nullable = (): PropertyDecorator => IsOptional();
