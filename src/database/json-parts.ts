/**
 * Long JSON arrays built by PostgreSQL, read as rows of a few dozen kB each instead of one text.
 *
 * Why: `pg` assembles each row of the wire protocol in one buffer, doubling it while the row is longer
 * than what it holds. Those buffers are memory outside V8's heap, and V8 starts a full collection after
 * every few dozen MB of it: a long map listing or provider page made one every dozen requests, each
 * marking the whole live heap on the helper threads. Rows that fit the socket's reads are parsed in the
 * buffers the driver already has; a caller chooses how many of its items make such a row
 * (docs/PERFORMANCE.md, "Design choices").
 */

/**
 * A subquery of the parts of the JSON array of `item` over the rows `from` (aliased `t`, numbered by
 * consecutive integers `t.n` in the array's order), `itemsPerPart` items a part: columns `part` (items
 * joined by commas, no brackets) and `g` (the part's place). No rows for no items. `item` is JSON SQL
 * of the row `t`. Parts are counted in items, not bytes: sizing them by a running `sum(octet_length(…))`
 * window doubled a list page's PostgreSQL time. Few items a part cost Node a row object each. The
 * statement need not sort the parts: joinJsonParts does, more cheaply than an ORDER BY over them.
 */
export function jsonArrayPartsSql(item: string, from: string, itemsPerPart: number): string {
  return jsonArraysPartsSql({ part: item }, from, itemsPerPart);
}

/**
 * Parts of several JSON arrays over the same rows (a line's coordinates and its times): a column of parts
 * per array, named by `items`' keys, each read back with joinJsonParts of its column.
 */
export function jsonArraysPartsSql(items: Record<string, string>, from: string, itemsPerPart: number): string {
  const parts = Object.entries(items).map(([column, item]) => `string_agg((${item})::text, ',' ORDER BY t.n) AS ${column}`);
  return `SELECT ${parts.join(', ')}, (t.n - 1) / ${itemsPerPart} AS g
     FROM ${from}
    GROUP BY (t.n - 1) / ${itemsPerPart}`;
}

/** A row of jsonArrayPartsSql's parts as read (both null on the one row of a page with no items). */
export interface JsonPart {
  part: string | null;
  g: number | null;
}

/**
 * The JSON text of the parts in the order of their places, between `open` and `close`. Concatenated with
 * `+`, which V8 keeps as a tree of the parts (a cons string) instead of copying them: the text is copied
 * once, where it is encoded for the socket. `Array.join` copied a long page into one more flat string on
 * V8's heap first; at 50 connections such strings outlived a scavenge and were promoted.
 */
export function joinJsonParts(rows: readonly JsonPart[], open = '[', close = ']'): string {
  return joinJsonPartsOf(rows, 'part', open, close);
}

/** joinJsonParts of the column `column` of jsonArraysPartsSql's rows. */
export function joinJsonPartsOf<C extends string>(rows: readonly ({ g: number | null } & Record<C, string | null>)[], column: C, open = '[', close = ']'): string {
  const parts = rows.filter((row) => row[column] !== null);
  if (parts.length > 1) parts.sort((a, b) => a.g! - b.g!);
  let text = open;
  parts.forEach((row, i) => (text = i === 0 ? text + row[column] : text + ',' + row[column]));
  return text + close;
}
