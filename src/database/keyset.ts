import { unplannedValue, type SqlParams } from './sql-params.js';
import { rowShape, typed, type RowShape } from './row-shape.js';

/**
 * Keyset ("cursor") pages: a page starts after (or ends before) a position, the sort key values of a
 * row, so reading page 10,000 costs what reading page 1 costs (an index range scan from the position,
 * never an OFFSET), and rows inserted meanwhile neither repeat nor push others off a page.
 */

/** One sort key: its SQL over the row alias, the cast that reads a position value back, its direction. */
export interface KeysetKey {
  sql: (alias: string) => string;
  /** `::timestamptz`, `::text`, `::uuid`, `::numeric`, `::float8`: positions travel as text and are cast back exactly. */
  cast: string;
  descending: boolean;
}

export type KeysetDirection = 'after' | 'before';

/**
 * The order of `keys` over `alias`; `reversed` reads it backwards (a page before a position is read
 * nearest first, then shown in order).
 */
export function keysetOrder(keys: readonly KeysetKey[], alias: string, reversed = false): string {
  return keys.map((key) => `${key.sql(alias)} ${key.descending !== reversed ? 'DESC' : 'ASC'}`).join(', ');
}

/**
 * The rows strictly past `position` in the order of `keys` (`reversed`: strictly before it). With one
 * direction for every key it is a row comparison, which an index on the keys answers as a range scan;
 * mixed directions expand to `k1 > v1 OR (k1 = v1 AND k2 < v2) …`.
 */
export function keysetPast(keys: readonly KeysetKey[], alias: string, position: readonly string[], reversed = false): string {
  const greater = (key: KeysetKey) => key.descending === reversed;
  if (keys.every((key) => greater(key) === greater(keys[0]))) {
    const columns = keys.map((key) => key.sql(alias)).join(', ');
    return `(${columns}) ${greater(keys[0]) ? '>' : '<'} (${position.join(', ')})`;
  }
  const alternatives = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((earlier, e) => `${earlier.sql(alias)} = ${position[e]}`);
    return `(${[...equal, `${key.sql(alias)} ${greater(key) ? '>' : '<'} ${position[index]}`].join(' AND ')})`;
  });
  return `(${alternatives.join(' OR ')})`;
}

/** The complement of keysetPast: the rows at or before `position` (at or after, `reversed`). */
export function keysetNotPast(keys: readonly KeysetKey[], alias: string, position: readonly string[], reversed = false): string {
  const greater = (key: KeysetKey) => key.descending === reversed;
  if (keys.every((key) => greater(key) === greater(keys[0]))) {
    const columns = keys.map((key) => key.sql(alias)).join(', ');
    return `(${columns}) ${greater(keys[0]) ? '<=' : '>='} (${position.join(', ')})`;
  }
  return `NOT ${keysetPast(keys, alias, position, reversed)}`;
}

/** The keys of row `alias` as a JSON array of text: a position, exact (timestamps to the microsecond, floats round-trip). */
export const keysetPositionSql = (keys: readonly KeysetKey[], alias: string): string =>
  `json_build_array(${keys.map((key) => `(${key.sql(alias)})::text`).join(', ')})`;

/** What a keyset page statement answers (keysetPageSql). */
export interface KeysetRows {
  /** The page's items, in order, as JSON array text. */
  data: string;
  /** The JSON array text of resources included with the page, when asked for. */
  included: string | null;
  /** The positions of the page's first and last rows (null when the page is empty). */
  first: string[] | null;
  last: string[] | null;
  /** More rows follow the page in the reading direction (after: past its last row; before: ahead of its first). */
  more: boolean;
  /** Rows lie on the other side of the position the page was read from (false when it was read from an end). */
  beyond: boolean;
}

/** The columns of keysetPageSql's one row. */
export const KEYSET_ROWS: RowShape<KeysetRows> = rowShape({
  data: 'text',
  included: 'text?',
  first: typed<string[] | null>(),
  last: typed<string[] | null>(),
  more: 'boolean',
  beyond: 'boolean',
});

export interface KeysetPage {
  /** The alias of the rows (`t` unless given) in `rows`, `keys`, `items` and the CTE `page`. */
  alias?: string;
  /** The SQL of the candidate rows (aliased `alias`) with `condition` added, in `order`, `limit` of them (`rows(condition, order, limit)`). */
  rows: (condition: string, order: string, limit: string) => string;
  keys: readonly KeysetKey[];
  /** The scalar SQL of the items' JSON array text, from `pageRows` (the rows of the page, numbered `n`) in `order`. */
  items: (pageRows: string, order: string) => string;
  /** The scalar SQL of the included resources' JSON array text, reading the CTE `page` (optional). */
  included?: string;
  direction: KeysetDirection;
  /** The position read from (null: from the start for `after`, from the end for `before`). */
  position: readonly string[] | null;
  size: number;
}

/**
 * One statement for a keyset page: the candidate rows past the position, one more than the page so
 * `more` is known without a count, numbered in reading order into the CTE `page`; the items (and
 * included resources) built from it; and, when read from a position, whether rows lie before it.
 */
export function keysetPageSql(page: KeysetPage, p: SqlParams): string {
  const t = page.alias ?? 't';
  const reversed = page.direction === 'before';
  // The position too is hidden from the planner (unplannedValue): in sight, it made every custom plan
  // cheaper than the generic one, so a page read from a position was planned on every execution (no
  // generic plan in pg_prepared_statements), where the range scan from it is the same plan for any position.
  const position = page.position?.map((value, index) => unplannedValue(p.add(value, page.keys[index].cast))) ?? null;
  const size = p.add(page.size, '::int');
  const reading = keysetOrder(page.keys, t, reversed);
  const past = position ? keysetPast(page.keys, t, position, reversed) : 'true';
  const beyond = position ? `EXISTS (${page.rows(keysetNotPast(page.keys, t, position, reversed), keysetOrder(page.keys, t, !reversed), '1')})` : 'false';
  const pageRows = `SELECT * FROM page ${t} WHERE ${t}.n <= ${size}`;
  const edge = (n: string) => `(SELECT ${keysetPositionSql(page.keys, t)} FROM page ${t} WHERE ${t}.n = ${n})`;
  const near = edge('1');
  const far = edge(`least(${size}, (SELECT count(*) FROM page))`);
  return `WITH page AS MATERIALIZED (
       SELECT ${t}.*, row_number() OVER (ORDER BY ${reading}) AS n
         FROM (${page.rows(past, reading, unplannedValue(`${size} + 1`))}) ${t})
     SELECT ${page.items(pageRows, `${t}.n ${reversed ? 'DESC' : 'ASC'}`)} AS data,
            ${page.included ?? 'NULL::text'} AS included,
            ${reversed ? far : near} AS first, ${reversed ? near : far} AS last,
            (SELECT count(*) FROM page) > ${size} AS more,
            ${beyond} AS beyond`;
}
