/**
 * A test line of `length` characters, "a123456789b123456789…": a letter every ten characters, so
 * that where Postfix folded it can be read off what arrived.
 */
export function markedLine(length: number): string {
  const marks = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let s = '';
  for (let i = 0; i < length; i++)
    s += i % 10 === 0 ? marks[Math.floor(i / 10) % marks.length] : String(i % 10);
  return s;
}
