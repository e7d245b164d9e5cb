import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp } from '../common/json-api/resource-sql.js';
import type { OrganizationRow } from './organizations.repository.js';

const ORGANIZATION = new ResourceForm<OrganizationRow>({
  type: 'organizations',
  attributes: { name: 'name', created: timestamp('created'), modified: timestamp('modified') },
});

export const organizationResource = (row: OrganizationRow): ResourceObject => ORGANIZATION.resource(row);

/** An organization's resource object in SQL, of the organizations row aliased `o` (twins include their organization). */
export const organizationJsonSql = (o: string, fieldset?: ReadonlySet<string>): string => ORGANIZATION.sql(o, fieldset);

/** What `fields[organizations]` may name. */
export const ORGANIZATION_FIELDS = ORGANIZATION.names;
