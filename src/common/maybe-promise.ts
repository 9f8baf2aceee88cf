/** A value now, or later: for hot paths whose work is synchronous on one driver and not on another. */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)` now when `value` is already there, otherwise once it arrives; no promise is made for a plain value. */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => R): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
