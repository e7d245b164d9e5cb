import type { ResourceObject } from '../common/json-api/resource.js';
import { memberNames, resourceJsonSql, type ResourceSql } from '../common/json-api/resource-sql.js';
import { isoTimestampSql } from '../database/timestamps.js';
import type { OrganizationRow } from './organizations.repository.js';

export function organizationResource(row: OrganizationRow): ResourceObject {
  return {
    type: 'organizations',
    id: row.id,
    attributes: { name: row.name, created: row.created, modified: row.modified },
  };
}

/** organizationResource as SQL of the organizations row aliased `o` (twins include their organization). */
const organizationSql = (o: string): ResourceSql => ({
  type: 'organizations',
  id: `${o}.id`,
  attributes: { name: `${o}.name`, created: isoTimestampSql(`${o}.created`), modified: isoTimestampSql(`${o}.modified`) },
});

export const organizationJsonSql = (o: string, fieldset?: ReadonlySet<string>): string => resourceJsonSql(organizationSql(o), fieldset);

/** What `fields[organizations]` may name. */
export const ORGANIZATION_FIELDS = memberNames(organizationSql('o'));
