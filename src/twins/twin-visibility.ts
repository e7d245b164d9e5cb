/**
 * The twin visibility rule (docs/API.md, section 9), as SQL: a caller acting in an organization sees
 * public twins, supplier twins (a non-empty `services`), and every twin of its own organization.
 * Every read of twins filters with it; quests, shown through their twin, read its shared half from
 * their `listed` column (kept from the twins by triggers, migration QuestListing).
 *
 * `alias` is the twins table alias in the query; `organizationParam` the placeholder holding the
 * caller's organization id (e.g. `$1`).
 */
export function visibleTwinSql(alias: string, organizationParam: string): string {
  return `(${sharedTwinSql(alias)} OR ${alias}.organization_id = ${organizationParam})`;
}

/**
 * The half of the rule that does not depend on the caller: twins every organization sees (public or
 * supplier). The partial indexes twins_shared_created_idx / twins_unshared_created_idx (migration
 * 1763790000000) are declared with this very predicate, so the planner can use them for it.
 */
export function sharedTwinSql(alias: string): string {
  return `(${alias}.public OR cardinality(${alias}.services) > 0)`;
}
