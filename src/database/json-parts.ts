/**
 * Long JSON arrays built by PostgreSQL, read as rows of a few dozen kB each instead of one text.
 *
 * Why: `pg` assembles each row of the wire protocol in one buffer, doubling it while the row is longer
 * than what it holds (64 → 128 → 256 → 512 kB for a 330 kB page). Those buffers are memory outside V8's
 * heap, and V8 starts a full collection after every ~30 MB of it: a 330 kB map listing or provider
 * page made one every dozen requests, each marking the whole live heap on the helper threads. Rows that
 * fit the socket's 64 kB reads are parsed in the buffers the driver already has; a caller chooses how
 * many of its items make such a row. In a loop of 955-feature pages at 8 at once
 * with a service-sized heap: 28–30 full collections in 1,500 pages as one text, none in parts; Node CPU
 * 2.5 ms a page → 0.6 ms (docs/PERFORMANCE.md).
 */

/**
 * A subquery of the parts of the JSON array of `item` over the rows `from` (aliased `t`, numbered by
 * consecutive integers `t.n` in the array's order), `itemsPerPart` items a part: columns `part` (items
 * joined by commas, no brackets) and `g` (the part's place). No rows for no items. `item` is JSON SQL
 * of the row `t`. Parts are counted in items, not bytes: sizing them by a running `sum(octet_length(…))`
 * window doubled the PostgreSQL time of a 50-twin list page (1,680 against 765 µs as one text). Few
 * items a part cost Node a row object each (one twin a row: a 50-twin page 100–150 µs more than eight a
 * row). The statement need not sort the parts: joinJsonParts does (an ORDER BY over the parts' rows cost
 * the map listing ~20 % more PostgreSQL time).
 */
export function jsonArrayPartsSql(item: string, from: string, itemsPerPart: number): string {
  return `SELECT string_agg((${item})::text, ',' ORDER BY t.n) AS part, (t.n - 1) / ${itemsPerPart} AS g
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
 * once, where it is encoded for the socket. `Array.join` copied a 330 kB page into one more flat string
 * on V8's heap first; at 50 connections such strings outlived a scavenge and were promoted, and the map
 * listing allocated 1,130 kB a page against 816 this way (docs/PERFORMANCE.md).
 */
export function joinJsonParts(rows: readonly JsonPart[], open = '[', close = ']'): string {
  const parts = rows.filter((row) => row.part !== null);
  if (parts.length > 1) parts.sort((a, b) => a.g! - b.g!);
  let text = open;
  parts.forEach((row, i) => (text = i === 0 ? text + row.part : text + ',' + row.part));
  return text + close;
}
