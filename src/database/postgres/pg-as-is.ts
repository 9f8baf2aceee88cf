import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/**
 * Column types whose values TypeORM's PostgresDriver passes through unchanged both ways:
 * `preparePersistentValue` gives them to pg as they are, and `prepareHydratedValue` gives back
 * what pg parsed (text, numbers, booleans; timestamps as the Dates pg made).
 */
const PG_TYPES_AS_IS = new Set<unknown>([
  'varchar',
  'character varying',
  'text',
  'integer',
  'int',
  'smallint',
  'bigint',
  'real',
  'double precision',
  'boolean',
  'uuid',
  'timestamptz',
  'timestamp with time zone',
]);

/**
 * Whether a column's values go to and come from pg as they are on PostgreSQL: no transformer, and
 * a type TypeORM does not convert. Hot paths skip TypeORM's per-value conversion for them.
 */
export const pgTakesAsIs = (column: ColumnMetadata): boolean =>
  !column.transformer && PG_TYPES_AS_IS.has(column.type);
