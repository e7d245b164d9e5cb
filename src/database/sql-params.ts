/** Collects `$n` parameters next to the SQL that uses them, for statements built from optional filters. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value; returns its placeholder, with `cast` (e.g. `::uuid`) appended. */
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }

  /**
   * Binds `value` where `marker` occurs in `sql`, and only if it does: a parameter the statement never
   * references has no type PostgreSQL can infer (an error), and which members a sparse fieldset keeps
   * decides whether some values are used at all. Markers are fixed texts of the service's SQL (client
   * values are never written into SQL text), so they cannot be forged.
   */
  bindWhereUsed(sql: string, marker: string, value: unknown, cast = ''): string {
    return sql.includes(marker) ? sql.replaceAll(marker, this.add(value, cast)) : sql;
  }
}

/**
 * A page's LIMIT or OFFSET as a scalar subquery: a value no plan is made for. A prepared statement is
 * planned for its values five times, then PostgreSQL compares those costs with a generic plan's, which
 * assumes an unknown LIMIT or OFFSET is a tenth of the rows; when a tenth is more than a page (a twin with
 * 2,000 events) the generic plan looks dearer and every execution is planned again (0.5–0.8 ms, a quarter
 * of a timeline page's throughput at 20M events). Hidden from both, the costs match and the plan is kept.
 */
export const unplannedValue = (placeholder: string): string => `(SELECT ${placeholder})`;

