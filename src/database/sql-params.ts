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
 * A value as a scalar subquery: one no plan is made for. A prepared statement is planned for its values
 * five times, then PostgreSQL compares those plans' costs with a generic plan's and keeps the generic one
 * only if it is not dearer. Values it can see make the two differ: a generic plan assumes an unknown LIMIT
 * or OFFSET is a tenth of the rows (at 20M events a tenth of a timeline is more than a page), and a custom
 * plan that knows the twin counts its events a little differently; either way every execution was planned
 * again, a large share of a cheap page's time. Hidden from both, their costs match
 * and the generic plan is kept. The value still serves as an index condition (an init plan's output).
 */
export const unplannedValue = (placeholder: string): string => `(SELECT ${placeholder})`;
