import { isCalendarTimestamp, isInstant } from '../../common/json-api/query.js';
import { isUuid } from '../../common/value-checks.js';
import type { SqlParams } from '../../database/sql-params.js';
import { FilterError, type ComparisonOperator, type Expression, type Operand, type SpatialFunction } from './cql2-ast.js';

/**
 * Compiles a CQL2 expression into one SQL condition over the row a queryable's SQL reads. Every literal
 * is a bound parameter (`SqlParams`), never text of the statement; property names only select one of the
 * declared queryables' SQL. Types are checked here, before any SQL runs: an unknown queryable, operands
 * of different types, an operator a type does not have → a FilterError naming it.
 *
 * What each node becomes (and so what "the same predicate in PostGIS" means):
 * - comparisons, LIKE (`%`, `_`, `\` escapes, as CQL2 and PostgreSQL both define it), BETWEEN (both ends
 *   included), IN, IS NULL, AND, OR, NOT: their SQL operators, with SQL's three-valued logic;
 * - CASEI(x): lower(x);
 * - S_<FN>(a, b): ST_<Fn>(a, b) on the geometries (CRS84, SRID 4326): the GiST index of the twins'
 *   locations answers S_INTERSECTS, S_WITHIN, S_CONTAINS, S_EQUALS, S_TOUCHES (and the rest filter);
 * - S_DWITHIN(a, b, d): ST_DWithin(a::geography, b::geography, d, false), within d metres on the sphere,
 *   answered by the index on the locations' geography.
 */

export type QueryableType = 'string' | 'number' | 'boolean' | 'timestamp' | 'uuid' | 'geometry';

export interface Queryable {
  type: QueryableType;
  /** The SQL of its value in the row aliased `alias`. */
  sql: (alias: string) => string;
}

export interface CompileOptions {
  /**
   * Literals as GDAL 3.6 writes them (`filter-lang=cql-text`): a character literal compared with a
   * timestamp queryable is read as a timestamp (when it is one), and 0 or 1 compared with a boolean
   * queryable as false or true (GDAL's fields hold booleans as integers).
   */
  lenientLiterals?: boolean;
}

interface Typed {
  sql: string;
  type: QueryableType;
}

const ORDERED: ReadonlySet<QueryableType> = new Set(['string', 'number', 'timestamp']);
const CASTS: Record<Exclude<QueryableType, 'geometry'>, string> = { string: '::text', number: '::float8', boolean: '::boolean', timestamp: '::timestamptz', uuid: '::uuid' };
const ST: Record<SpatialFunction, string> = {
  S_INTERSECTS: 'ST_Intersects',
  S_EQUALS: 'ST_Equals',
  S_DISJOINT: 'ST_Disjoint',
  S_TOUCHES: 'ST_Touches',
  S_WITHIN: 'ST_Within',
  S_OVERLAPS: 'ST_Overlaps',
  S_CROSSES: 'ST_Crosses',
  S_CONTAINS: 'ST_Contains',
};
const A = { string: 'a string', number: 'a number', boolean: 'a boolean', timestamp: 'a timestamp', uuid: 'a UUID', geometry: 'a geometry' } satisfies Record<QueryableType, string>;

const isDate = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && isCalendarTimestamp(value);

class Compiler {
  constructor(
    private readonly queryables: Readonly<Record<string, Queryable>>,
    private readonly p: SqlParams,
    private readonly alias: string,
    private readonly options: CompileOptions,
  ) {}

  condition(node: Expression): string {
    switch (node.kind) {
      case 'and':
      case 'or':
        return `(${node.args.map((arg) => this.condition(arg)).join(node.kind === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(NOT ${this.condition(node.arg)})`;
      case 'literal':
        return node.value ? 'true' : 'false';
      case 'compare':
        return this.compare(node.op, node.left, node.right);
      case 'like': {
        const value = this.operand(node.value);
        if (value.type !== 'string') throw new FilterError(`LIKE applies to strings; ${this.describe(node.value)} is ${A[value.type]}.`);
        const pattern = node.pattern.kind === 'casei' ? node.pattern.operand : node.pattern;
        if (pattern.kind !== 'string') throw new FilterError('The pattern of LIKE is a string literal (or CASEI of one).');
        return `(${value.sql} ${node.negated ? 'NOT LIKE' : 'LIKE'} ${this.operand(node.pattern).sql})`;
      }
      case 'between': {
        const value = this.operand(node.value);
        if (!ORDERED.has(value.type)) throw new FilterError(`BETWEEN applies to numbers, strings and timestamps; ${this.describe(node.value)} is ${A[value.type]}.`);
        const low = this.operand(node.low, value.type);
        const high = this.operand(node.high, value.type);
        this.sameType(value, node.value, low, node.low, 'BETWEEN');
        this.sameType(value, node.value, high, node.high, 'BETWEEN');
        return `(${value.sql} ${node.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${low.sql} AND ${high.sql})`;
      }
      case 'in': {
        const value = this.anchor(node.value, node.list);
        if (value.type === 'geometry') throw new FilterError('IN does not apply to geometries (use S_EQUALS).');
        const items = node.list.map((item) => {
          const typed = this.operand(item, value.type);
          this.sameType(value, node.value, typed, item, 'IN');
          return typed.sql;
        });
        return `(${value.sql} ${node.negated ? 'NOT IN' : 'IN'} (${items.join(', ')}))`;
      }
      case 'isNull':
        return `(${this.operand(node.value).sql} IS ${node.negated ? 'NOT ' : ''}NULL)`;
      case 'spatial': {
        const [left, right] = [this.geometry(node.left, node.fn), this.geometry(node.right, node.fn)];
        return `${ST[node.fn]}(${left}, ${right})`;
      }
      case 'dwithin': {
        const [left, right] = [this.geometry(node.left, 'S_DWITHIN'), this.geometry(node.right, 'S_DWITHIN')];
        if (node.distance.kind !== 'number' || node.distance.value < 0) throw new FilterError('The distance of S_DWITHIN is a number of metres, 0 or more.');
        return `ST_DWithin((${left})::geography, (${right})::geography, ${this.p.add(node.distance.value, '::float8')}, false)`;
      }
    }
  }

  private compare(op: ComparisonOperator, leftNode: Operand, rightNode: Operand): string {
    const settled = this.anchor(leftNode, [rightNode]);
    const right = this.operand(rightNode, settled.type);
    this.sameType(settled, leftNode, right, rightNode, op);
    if (settled.type === 'geometry') throw new FilterError(`${op} does not compare geometries: use S_EQUALS (or another spatial function).`);
    if ((settled.type === 'boolean' || settled.type === 'uuid') && op !== '=' && op !== '<>') {
      throw new FilterError(`${op} does not apply to ${settled.type === 'boolean' ? 'booleans' : 'UUIDs'} (${this.describe(leftNode)}): use = or <>.`);
    }
    return `(${settled.sql} ${op} ${right.sql})`;
  }

  /** The operand whose type the others follow: a character literal takes its type from a typed peer. */
  private anchor(node: Operand, peers: readonly Operand[]): Typed {
    if (node.kind !== 'string' && node.kind !== 'number') return this.operand(node);
    const peer = peers.find((other) => other.kind !== 'string' && other.kind !== 'number') ?? peers.find((other) => other.kind !== 'string');
    return this.operand(node, peer ? this.typeOf(peer) : undefined);
  }

  private sameType(a: Typed, aNode: Operand, b: Typed, bNode: Operand, op: string): void {
    if (a.type !== b.type) throw new FilterError(`Type mismatch in ${op}: ${this.describe(aNode)} is ${A[a.type]}, ${this.describe(bNode)} is ${A[b.type]}.`);
  }

  private geometry(node: Operand, fn: string): string {
    const typed = this.operand(node);
    if (typed.type !== 'geometry') throw new FilterError(`${fn} takes geometries; ${this.describe(node)} is ${A[typed.type]}.`);
    return typed.sql;
  }

  private describe(node: Operand): string {
    switch (node.kind) {
      case 'property':
        return node.name;
      case 'casei':
        return `CASEI(${this.describe(node.operand)})`;
      case 'geometry':
        return `the ${node.value.type} literal`;
      case 'string':
        return `'${node.value.length > 30 ? `${node.value.slice(0, 27)}...` : node.value}'`;
      default:
        return String(node.value);
    }
  }

  /** The type of an operand that is not a character literal (nothing bound: a parameter bound and not used has no type PostgreSQL can infer). */
  private typeOf(node: Exclude<Operand, { kind: 'string' }>): QueryableType {
    switch (node.kind) {
      case 'property':
        return this.queryable(node.name).type;
      case 'casei':
        return 'string';
      case 'date':
        return 'timestamp';
      default:
        return node.kind;
    }
  }

  private queryable(name: string): Queryable {
    const queryable = Object.hasOwn(this.queryables, name) ? this.queryables[name] : undefined;
    if (!queryable) throw new FilterError(`Unknown queryable "${name}"; the queryables are ${Object.keys(this.queryables).join(', ')}.`);
    return queryable;
  }

  /** The SQL and type of an operand; `peer` is the type it is compared with (a character literal may be read as it). */
  private operand(node: Operand, peer?: QueryableType): Typed {
    switch (node.kind) {
      case 'property': {
        const queryable = this.queryable(node.name);
        return { sql: queryable.sql(this.alias), type: queryable.type };
      }
      case 'string':
        if (peer === 'uuid') {
          if (!isUuid(node.value)) throw new FilterError(`'${node.value}' is not a UUID (the value of a UUID queryable).`);
          return this.literal(node.value.toLowerCase(), 'uuid');
        }
        if (peer === 'timestamp' && this.options.lenientLiterals && (isInstant(node.value) || isDate(node.value))) {
          return this.literal(isDate(node.value) ? `${node.value}T00:00:00Z` : node.value, 'timestamp');
        }
        return this.literal(node.value, 'string');
      case 'number':
        if (peer === 'boolean' && this.options.lenientLiterals && (node.value === 0 || node.value === 1)) return this.literal(node.value === 1, 'boolean');
        return this.literal(node.value, 'number');
      case 'boolean':
        return this.literal(node.value, 'boolean');
      case 'timestamp':
        if (!isInstant(node.value)) throw new FilterError(`TIMESTAMP('${node.value}') is not an instant: YYYY-MM-DDThh:mm:ss[.ffffff]Z (or an offset).`);
        return this.literal(node.value, 'timestamp');
      case 'date':
        // A date compares as its first instant (midnight UTC).
        if (!isDate(node.value)) throw new FilterError(`DATE('${node.value}') is not a date: YYYY-MM-DD.`);
        return this.literal(`${node.value}T00:00:00Z`, 'timestamp');
      case 'geometry':
        return { sql: `ST_SetSRID(ST_GeomFromGeoJSON(${this.p.add(JSON.stringify(node.value), '::text')}), 4326)`, type: 'geometry' };
      case 'casei': {
        const inner = this.operand(node.operand);
        if (inner.type !== 'string') throw new FilterError(`CASEI applies to strings; ${this.describe(node.operand)} is ${A[inner.type]}.`);
        return { sql: `lower(${inner.sql})`, type: 'string' };
      }
    }
  }

  private literal(value: unknown, type: Exclude<QueryableType, 'geometry'>): Typed {
    return { sql: this.p.add(value, CASTS[type]), type };
  }
}

/** The SQL condition of `expression` over the row aliased `alias`, its literals added to `p`. */
export function compileFilter(expression: Expression, queryables: Readonly<Record<string, Queryable>>, p: SqlParams, alias: string, options: CompileOptions = {}): string {
  return new Compiler(queryables, p, alias, options).condition(expression);
}
