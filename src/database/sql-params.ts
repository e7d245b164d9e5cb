/** Collects `$n` parameters next to the SQL that uses them, for statements built from optional filters. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value; returns its placeholder, with `cast` (e.g. `::uuid`) appended. */
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}
