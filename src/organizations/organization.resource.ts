import type { ResourceObject } from '../common/json-api/resource.js';
import type { OrganizationRow } from './organizations.repository.js';

export function organizationResource(row: OrganizationRow): ResourceObject {
  return {
    type: 'organizations',
    id: row.id,
    attributes: { name: row.name, created: row.created, modified: row.modified },
  };
}
