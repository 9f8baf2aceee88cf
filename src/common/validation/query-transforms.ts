import { Transform } from 'class-transformer';

/** Query strings `true` / `false` become booleans; anything else is left for @IsBoolean to refuse. */
export const QueryBoolean = () =>
  Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value));

/** Query strings that are whole decimal numbers become numbers; anything else is left for @IsInt to refuse. */
export const QueryInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value,
  );

/** E-mail addresses are compared and stored trimmed and lower-cased. */
export const NormalizeEmail = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  );
