/**
 * The twin visibility rule (decisions section 2), as SQL: a caller acting in an organization sees
 * public twins, supplier twins (a non-empty `services`), and every twin of its own organization.
 * Every read of twins, and of anything shown through a twin (quests), filters with it.
 *
 * `alias` is the twins table alias in the query; `organizationParam` the placeholder holding the
 * caller's organization id (e.g. `$1`).
 */
export function visibleTwinSql(alias: string, organizationParam: string): string {
  return `(${alias}.public OR cardinality(${alias}.services) > 0 OR ${alias}.organization_id = ${organizationParam})`;
}
