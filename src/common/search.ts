/** Escapes `%`, `_` and `\` for a `LIKE … ESCAPE '\'` pattern. */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `%text%`, lower-cased and escaped, for a case-insensitive substring search. */
export const containsPattern = (text: string): string => `%${escapeLike(text.toLowerCase())}%`;
