/**
 * Resource objects built by PostgreSQL. A form is declared as its members, each a name (as the wire
 * spells it) and the SQL of its value; a sparse fieldset (representation.ts) keeps some of them, by
 * the same rule as sparseResource: `attributes` always present, `relationships` only when one is kept.
 */
export type MembersSql = Readonly<Record<string, string>>;

export interface ResourceSql {
  type: string;
  /** The SQL of the id. */
  id: string;
  attributes: MembersSql;
  /** Each relationship's SQL: the whole relationship object (`json_build_object('data', …)`). */
  relationships?: MembersSql;
}

/** `json_build_object(…)` of the members `keep` names (all of them when it is undefined). */
function objectSql(members: MembersSql, keep: ReadonlySet<string> | undefined): string | undefined {
  const pairs = Object.entries(members)
    .filter(([name]) => !keep || keep.has(name))
    .map(([name, sql]) => `'${name}', ${sql}`);
  return pairs.length === 0 ? undefined : `json_build_object(${pairs.join(', ')})`;
}

/** The JSON resource object of `resource` in SQL, with the members of `fieldset` (undefined: all). */
export function resourceJsonSql(resource: ResourceSql, fieldset?: ReadonlySet<string>): string {
  const attributes = objectSql(resource.attributes, fieldset) ?? `'{}'::json`;
  const relationships = resource.relationships && objectSql(resource.relationships, fieldset);
  return `json_build_object('type', '${resource.type}', 'id', ${resource.id}, 'attributes', ${attributes}${relationships ? `, 'relationships', ${relationships}` : ''})`;
}

/** The member names of a form: what `fields[<type>]` may name. */
export const memberNames = (resource: ResourceSql): string[] => [...Object.keys(resource.attributes), ...Object.keys(resource.relationships ?? {})];
