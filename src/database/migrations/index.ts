import { Foundation1763769600000 } from './1763769600000-foundation';

/** In order. Listed explicitly so the compiled app, ts-jest and the CLI all load the same set. */
export const MIGRATIONS = [Foundation1763769600000];
