/** The OpenAPI description of the organization resource (also the answer of `POST /admin/organizations/`). */
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { pageDocument, resourceForms, singleDocument, TIMESTAMP } from '../common/openapi/schemas.js';
import { organizationResource } from './organization.resource.js';
import type { OrganizationRow } from './organizations.repository.js';

const sample = organizationResource({
  id: EXAMPLE_IDS.organizations,
  name: 'Acme Outdoors',
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:26:03.123456Z',
} satisfies OrganizationRow);

const FORMS = resourceForms({
  type: 'organizations',
  attributes: { name: { type: 'string', minLength: 1, maxLength: 255 }, created: TIMESTAMP, modified: TIMESTAMP },
  forms: { OrganizationResource: { sample, description: 'An organization: twins, quests, images and events belong to one.' } },
});

export const ORGANIZATION_DOCUMENT = singleDocument('OrganizationDocument', FORMS.OrganizationResource, sample);
export const ORGANIZATION_PAGE = pageDocument('OrganizationListDocument', FORMS.OrganizationResource, { path: '/organizations/', items: [sample] });
