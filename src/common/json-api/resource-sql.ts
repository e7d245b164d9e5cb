import { isoTimestampSql } from '../../database/timestamps.js';
import { identifier, type Relationship, type ResourceObject } from './resource.js';

/**
 * Wire forms, each declared once as a table of its members in wire order. A member says how SQL builds
 * its value from the row aliased `a` and, beside it, how Node gets the same value from the row as the
 * repository reads it: reads have PostgreSQL write the JSON text (it goes to the client unparsed), while
 * write answers and OpenAPI examples map a row. Keeping both sides in one entry is what keeps them equal
 * (test/e2e/resource-json.e2e-spec.ts checks that they are); the names `fields[<type>]` may use come
 * from the same table, so a fieldset cannot name a member the form lacks.
 *
 * `S` is what the SQL of a form needs beyond the row (e.g. the SQL of the images base URL), `N` what Node
 * needs (e.g. the function that makes an image URL).
 */
export interface Member<R, S = unknown, N = unknown> {
  readonly sql: (a: string, inputs: S) => string;
  readonly value: (row: R, inputs: N) => unknown;
}

/** A member, or the name of the column that is its value on both sides. */
type MemberOf<R, S, N> = Member<R, S, N> | (keyof R & string);

interface FormDeclaration<R, S, N> {
  type: string;
  attributes: Readonly<Record<string, MemberOf<R, S, N>>>;
  /** Each relationship's whole object (`{data, meta?}`). */
  relationships?: Readonly<Record<string, Member<R, S, N>>>;
}

/** The column itself. */
const column = <K extends string>(name: K): Member<Record<K, unknown>> => ({ sql: (a) => `${a}.${name}`, value: (row) => row[name] });

/**
 * A timestamp column: Node has it as the pg type parser wrote it (timestamps.ts), and SQL writes the same
 * text. `sqlName` is the column as SQL must spell it where that differs (a keyword: `"timestamp"`).
 */
export const timestamp = <K extends string>(name: K, sqlName: string = name): Member<Record<K, unknown>> => ({
  sql: (a) => isoTimestampSql(`${a}.${sqlName}`),
  value: (row) => row[name],
});

/** A JSON object of columns of the row (wire name → column), never null. */
export function jsonObject<K extends string>(members: Readonly<Record<string, K>>): Member<Record<K, unknown>> {
  const entries = Object.entries(members);
  return {
    sql: (a) => `json_build_object(${entries.map(([name, key]) => `'${name}', ${a}.${key}`).join(', ')})`,
    value: (row) => {
      const out: Record<string, unknown> = {};
      for (const [name, key] of entries) out[name] = row[key];
      return out;
    },
  };
}

/** A to-one relationship to the `type` resource the column `key` names. */
export const toOne = <K extends string>(type: string, key: K): Member<Record<K, string>> => ({
  sql: (a) => `json_build_object('data', json_build_object('type', '${type}', 'id', ${a}.${key}))`,
  value: (row): Relationship => ({ data: { type, id: row[key] } }),
});

/** toOne where the column may be null: then `{data: null}`. */
export const toOneOrNull = <K extends string>(type: string, key: K): Member<Record<K, string | null>> => ({
  sql: (a) => `json_build_object('data', CASE WHEN ${a}.${key} IS NOT NULL THEN json_build_object('type', '${type}', 'id', ${a}.${key}) END)`,
  value: (row): Relationship => ({ data: identifier(type, row[key]) }),
});

interface Entry<R, S, N> {
  readonly name: string;
  readonly member: Member<R, S, N>;
}

const entriesOf = <R, S, N>(members: Readonly<Record<string, MemberOf<R, S, N>>>): Entry<R, S, N>[] =>
  Object.entries(members).map(([name, member]) => ({ name, member: typeof member === 'string' ? (column(member) as Member<R, S, N>) : member }));

/** `'name', <SQL>` of the members `keep` names (all of them when it is undefined), in wire order. */
const pairsSql = <R, S, N>(entries: readonly Entry<R, S, N>[], a: string, inputs: S, keep: ReadonlySet<string> | undefined): string[] =>
  entries.filter(({ name }) => !keep || keep.has(name)).map(({ name, member }) => `'${name}', ${member.sql(a, inputs)}`);

/** `json_build_object(…)` of the members `keep` names (all of them when it is undefined). */
function objectSql<R, S, N>(entries: readonly Entry<R, S, N>[], a: string, inputs: S, keep: ReadonlySet<string> | undefined): string | undefined {
  const pairs = pairsSql(entries, a, inputs, keep);
  return pairs.length === 0 ? undefined : `json_build_object(${pairs.join(', ')})`;
}

/** The values of `entries` from `row`, in wire order. */
function valuesOf<R, S, N>(entries: readonly Entry<R, S, N>[], row: R, inputs: N): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { name, member } of entries) out[name] = member.value(row, inputs);
  return out;
}

/** A wire form of rows `R` (their `id` is the resource's id), made from its declaration. */
export class ResourceForm<R extends { id: string }, S = void, N = void> {
  readonly type: string;
  /** What `fields[<type>]` may name: the attributes, then the relationships. */
  readonly names: readonly string[];
  private readonly attributes: readonly Entry<R, S, N>[];
  private readonly relationships: readonly Entry<R, S, N>[] | undefined;

  constructor(declaration: FormDeclaration<R, S, N>) {
    this.type = declaration.type;
    this.attributes = entriesOf(declaration.attributes);
    this.relationships = declaration.relationships && entriesOf(declaration.relationships);
    this.names = [...this.attributes, ...(this.relationships ?? [])].map(({ name }) => name);
  }

  /**
   * The JSON resource object of the row aliased `a` in SQL, with the members of `fieldset` (all when
   * undefined), by the rule of sparseResource: `attributes` always present, `relationships` only when
   * one is kept.
   */
  sql(a: string, fieldset: ReadonlySet<string> | undefined, inputs: S): string {
    const attributes = objectSql(this.attributes, a, inputs, fieldset) ?? `'{}'::json`;
    const relationships = this.relationships && objectSql(this.relationships, a, inputs, fieldset);
    return `json_build_object('type', '${this.type}', 'id', ${a}.id, 'attributes', ${attributes}${relationships ? `, 'relationships', ${relationships}` : ''})`;
  }

  /**
   * The `'name', <SQL>` pairs of the attributes `keep` names (all when undefined), in wire order: for a
   * document that shows a form's attributes outside a resource object (an OGC API feature's `properties`).
   */
  attributePairsSql(a: string, keep: ReadonlySet<string> | undefined, inputs: S): string[] {
    return pairsSql(this.attributes, a, inputs, keep);
  }

  /** The resource object of `row`, every member. */
  resource(row: R, inputs: N): ResourceObject {
    const attributes = valuesOf(this.attributes, row, inputs);
    return this.relationships
      ? { type: this.type, id: row.id, attributes, relationships: valuesOf(this.relationships, row, inputs) as Record<string, Relationship> }
      : { type: this.type, id: row.id, attributes };
  }
}
