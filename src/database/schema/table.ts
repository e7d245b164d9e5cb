import { EntitySchema, type EntitySchemaColumnOptions, type EntitySchemaOptions } from 'typeorm';

/** The GeoJSON geometry the service stores: a WGS 84 point, longitude first. */
export interface GeoPoint {
  type: 'Point';
  coordinates: [number, number];
}

/** The PostgreSQL types the schema uses, and what pg hands each over as (with the type parsers of database/timestamps.ts). */
export interface TypeOf {
  uuid: string;
  varchar: string;
  text: string;
  char: string;
  /** Exact decimals stay strings (money). */
  numeric: string;
  /** Microsecond ISO-8601 strings (database/timestamps.ts). */
  timestamptz: string;
  boolean: boolean;
  integer: number;
  float8: number;
  /** 64-bit integers as numbers (installPgTypeParsers: counts and positions stay far below 2^53). */
  bigint: number;
  smallint: number;
  jsonb: Record<string, unknown>;
  bytea: Buffer;
  geometry: GeoPoint;
}

export type ColumnSpec = Omit<EntitySchemaColumnOptions, 'type'> & { type: keyof TypeOf };

type ValueOf<C> = C extends { type: infer T extends keyof TypeOf }
  ? (C extends { array: true } ? TypeOf[T][] : TypeOf[T]) | (C extends { nullable: true } ? null : never)
  : never;

export interface Table<Columns extends Record<string, ColumnSpec> = Record<string, ColumnSpec>> {
  /** The table's name in SQL. */
  readonly name: string;
  readonly columns: Columns;
  /** What TypeORM knows of the table: the migration check (`npm run migration:check`) compares it with the migrated database. */
  readonly entity: EntitySchema;
}

/** A row of `T` as pg returns it for `SELECT *`: column names as keys, each typed by its declaration. */
export type Row<T extends Table> = { -readonly [K in keyof T['columns']]: ValueOf<T['columns'][K]> };

/** The column names of `T`. */
export type ColumnOf<T extends Table> = keyof T['columns'] & string;

/**
 * Declares a table once: its columns (keys are the SQL column names) give the row type (`Row<T>`) the
 * repositories read, the column lists and parameter casts their SQL is written with (`select`, `castOf`),
 * and, with the constraints in `options`, the TypeORM entity schema the migration check compares with the
 * migrated database. Relations name their target table by name, so no table file imports another.
 */
export function defineTable<const Columns extends Record<string, ColumnSpec>>(
  name: string,
  columns: Columns,
  options: Omit<EntitySchemaOptions<unknown>, 'name' | 'tableName' | 'columns'> = {},
): Table<Columns> {
  const entity = new EntitySchema({ name, tableName: name, columns: columns as unknown as EntitySchemaOptions<unknown>['columns'], ...options });
  return { name, columns, entity };
}

/** SQL casts of the parameter types, so a `$n` always carries its column's type. */
const CASTS: Record<keyof TypeOf, string> = {
  uuid: 'uuid',
  varchar: 'varchar',
  text: 'text',
  char: 'char',
  numeric: 'numeric',
  timestamptz: 'timestamptz',
  boolean: 'boolean',
  integer: 'int',
  float8: 'float8',
  bigint: 'bigint',
  smallint: 'smallint',
  jsonb: 'jsonb',
  bytea: 'bytea',
  geometry: 'geometry',
};

/** The SQL type of `column` of `table` (`text[]`, `jsonb`, …), for casts and record definitions. */
export function sqlTypeOf<T extends Table>(table: T, column: ColumnOf<T>): string {
  const spec = table.columns[column];
  return `${CASTS[spec.type]}${spec.array ? '[]' : ''}`;
}

/** `::type` for a parameter bound to `column` of `table`. */
export const castOf = <T extends Table>(table: T, column: ColumnOf<T>): string => `::${sqlTypeOf(table, column)}`;

/**
 * The select list of `table` under `alias`: every column (or those of `only`), each as itself unless
 * `expressions` gives the SQL that produces it (e.g. `location` as GeoJSON). Columns are written in
 * declaration order, so the list changes only when the schema does.
 */
export function select<T extends Table>(
  table: T,
  alias: string,
  options: { only?: readonly ColumnOf<T>[]; expressions?: Partial<Record<ColumnOf<T>, (alias: string) => string>> } = {},
): string {
  const names = options.only ?? (Object.keys(table.columns) as ColumnOf<T>[]);
  return names.map((column) => {
    const expression = options.expressions?.[column];
    return expression ? `${expression(alias)} AS ${column}` : `${alias}.${column}`;
  }).join(', ');
}
