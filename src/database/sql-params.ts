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
