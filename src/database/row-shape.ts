import type { ColumnOf, Row, Table, TypeOf } from './schema/index.js';

/**
 * The columns a statement answers with, declared once next to its SQL, and the row type they make.
 * `Sql.rows(shape, text, …)` compares the declared names with the columns of the statement's first
 * answer (pg's `fields`, or the first row's keys inside a transaction) and throws, naming the statement
 * and the columns, when they differ: a renamed or forgotten column fails the first query, not a page
 * later. Each text is checked once; after that the shape costs a set lookup per statement, nothing per row.
 */
export interface RowShape<R> {
  readonly columns: readonly string[];
  /** The row type, for the compiler only (never set). */
  readonly row?: R;
}

/** A column by its PostgreSQL type, as the schema's (table.ts): `?` when it may be null, `[]` an array. */
export type ColumnType = keyof TypeOf | `${keyof TypeOf}?` | `${keyof TypeOf}[]` | `${keyof TypeOf}[]?`;

/** A column whose value's type the declaration states (`typed<T>()`): JSON PostgreSQL parsed, a record of several. */
export interface Typed<T> {
  readonly typed: true;
  /** For the compiler only. */
  readonly value?: T;
}

const TYPED: Typed<never> = { typed: true };
export const typed = <T>(): Typed<T> => TYPED as Typed<T>;

type ValueOfColumn<C> =
  C extends Typed<infer T>
    ? T
    : C extends `${infer B extends keyof TypeOf}[]?`
      ? TypeOf[B][] | null
      : C extends `${infer B extends keyof TypeOf}[]`
        ? TypeOf[B][]
        : C extends `${infer B extends keyof TypeOf}?`
          ? TypeOf[B] | null
          : C extends keyof TypeOf
            ? TypeOf[C]
            : never;

type Declaration = Record<string, ColumnType | Typed<unknown>>;
export type RowOfDeclaration<D extends Declaration> = { -readonly [K in keyof D]: ValueOfColumn<D[K]> };

/** The row type of a shape. */
export type RowOf<S> = S extends RowShape<infer R> ? R : never;

/** A shape of the columns `declaration` names, each typed as it says. */
export function rowShape<const D extends Declaration>(declaration: D): RowShape<RowOfDeclaration<D>> {
  return { columns: Object.keys(declaration) };
}

/** The shape of `table`'s rows: every column, or those of `only` (what `select(table, alias, { only })` lists). */
export function tableShape<T extends Table>(table: T): RowShape<Row<T>>;
export function tableShape<T extends Table, const K extends ColumnOf<T>>(table: T, only: readonly K[]): RowShape<Pick<Row<T>, K>>;
export function tableShape<T extends Table>(table: T, only?: readonly string[]): RowShape<unknown> {
  return { columns: only ?? Object.keys(table.columns) };
}

/** `shape` with the columns of `declaration` after its own (a table's row and a computed version, say). */
export function withColumns<R, const D extends Declaration>(shape: RowShape<R>, declaration: D): RowShape<R & RowOfDeclaration<D>> {
  return { columns: [...shape.columns, ...Object.keys(declaration)] };
}

/** The columns `only` of `shape`. */
export function pickColumns<R, const K extends keyof R & string>(shape: RowShape<R>, only: readonly K[]): RowShape<Pick<R, K>> {
  if (only.some((column) => !shape.columns.includes(column))) throw new Error(`Not columns of the shape: ${only.join(', ')}`);
  return { columns: only };
}

/** What a statement answering other columns than its shape declares fails with. */
export class RowShapeError extends Error {
  override readonly name = 'RowShapeError';
}

/**
 * The texts whose answers matched their shape. A text answers one set of columns, so it is checked
 * once whichever shape reads it. Bounded like the prepared statements' names: texts built from
 * client-chosen filters past this many are checked on every answer (a comparison of a few names).
 */
const checked = new Set<string>();
export const MAX_CHECKED_TEXTS = 2000;

/** Whether `text`'s columns were already found to match. */
export const isChecked = (text: string): boolean => checked.has(text);

/** Compares the columns `text` answered with (`answered`) with `shape`'s; throws RowShapeError naming the difference, else remembers the text. */
export function checkColumns(shape: RowShape<unknown>, text: string, answered: readonly string[]): void {
  const declared = new Set(shape.columns);
  const answeredSet = new Set(answered);
  const missing = shape.columns.filter((column) => !answeredSet.has(column));
  const extra = [...answeredSet].filter((column) => !declared.has(column));
  if (missing.length > 0 || extra.length > 0) {
    const statement = text.replace(/\s+/g, ' ').trim();
    throw new RowShapeError(
      `The statement answered other columns than it declares (${[
        missing.length > 0 ? `missing: ${missing.join(', ')}` : '',
        extra.length > 0 ? `not declared: ${extra.join(', ')}` : '',
      ].filter(Boolean).join('; ')}): ${statement.length > 300 ? `${statement.slice(0, 300)}…` : statement}`,
    );
  }
  if (checked.size < MAX_CHECKED_TEXTS) checked.add(text);
}
