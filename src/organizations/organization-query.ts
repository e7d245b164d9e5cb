import { declareQuery, type QueryOf } from '../common/json-api/query.js';
import { ORGANIZATION_FIELDS } from './organization.resource.js';

const FIELDS = { fields: { organizations: ORGANIZATION_FIELDS } };

/** `GET /organizations/`: pages and sparse fieldsets. */
export const ORGANIZATION_LIST_QUERY = declareQuery({}, { paginated: true, ...FIELDS });
export type OrganizationListQuery = QueryOf<typeof ORGANIZATION_LIST_QUERY.parameters, true>;

/** `GET /organizations/<ORG_ID>`: sparse fieldsets. */
export const ORGANIZATION_QUERY = declareQuery({}, FIELDS);
export type OrganizationQuery = QueryOf<typeof ORGANIZATION_QUERY.parameters>;
