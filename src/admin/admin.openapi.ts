/**
 * The OpenAPI description of the admin routes (docs/API.md, section 16). The account and token answers are
 * built in admin.service.ts (no resource mapper), so their schemas are written out here; the e2e suite
 * validates every answer against them.
 */
import { getSchemaPath } from '@nestjs/swagger';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { component, requestDocument, singleDocument, TIMESTAMP, toMany, toManyRequest, toOne, UUID } from '../common/openapi/schemas.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import { ORGANIZATION_DOCUMENT } from '../organizations/organization.openapi.js';
import { AccountAttributes, OrganizationAttributes, TokenAttributes } from './dto/admin.dto.js';

const CREATED = '2026-11-21T19:26:03.123456Z';

const account: ResourceObject = {
  type: 'accounts',
  id: EXAMPLE_IDS.accounts,
  attributes: { name: 'Ada', created: CREATED, modified: CREATED },
  relationships: { organizations: { data: [{ type: 'organizations', id: EXAMPLE_IDS.organizations }] } },
};

const token: ResourceObject = {
  type: 'tokens',
  id: EXAMPLE_IDS.tokens,
  attributes: { token: 'tw_Ke9pQ2mX7vL4sT8wZ1aB3cD5eF6gH0jK', created: CREATED, expires: '2027-01-01T00:00:00.000000Z' },
  relationships: { account: { data: { type: 'accounts', id: EXAMPLE_IDS.accounts } } },
};

const ACCOUNT = component('AccountResource', {
  type: 'object',
  description: 'An account: who a token acts for, member of organizations.',
  required: ['type', 'id', 'attributes', 'relationships'],
  properties: {
    type: { type: 'string', enum: ['accounts'] },
    id: UUID,
    attributes: {
      type: 'object',
      required: ['name', 'created', 'modified'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, created: TIMESTAMP, modified: TIMESTAMP },
      additionalProperties: false,
    },
    relationships: {
      type: 'object',
      required: ['organizations'],
      properties: { organizations: toMany('organizations') },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});

const TOKEN = component('TokenResource', {
  type: 'object',
  description: 'An access token. The plaintext `token` is in this answer only; the service keeps its SHA-256.',
  required: ['type', 'id', 'attributes', 'relationships'],
  properties: {
    type: { type: 'string', enum: ['tokens'] },
    id: UUID,
    attributes: {
      type: 'object',
      required: ['token', 'created', 'expires'],
      properties: {
        token: { type: 'string', pattern: '^tw_[A-Za-z0-9_-]{16,}$', description: 'Send it as `Authorization: Token <token>`.' },
        created: TIMESTAMP,
        expires: { ...TIMESTAMP, nullable: true, description: 'null: never.' },
      },
      additionalProperties: false,
    },
    relationships: { type: 'object', required: ['account'], properties: { account: toOne('accounts') }, additionalProperties: false },
  },
  additionalProperties: false,
});

export { ORGANIZATION_DOCUMENT };
export const ACCOUNT_DOCUMENT = singleDocument('AccountDocument', ACCOUNT, account);
export const TOKEN_DOCUMENT = singleDocument('TokenDocument', TOKEN, token);

export const ORGANIZATION_CREATE_REQUEST = {
  schema: requestDocument('OrganizationCreateDocument', {
    type: 'organizations',
    description: '`{data: {type: "organizations", attributes: {name}}}`',
    attributes: { $ref: getSchemaPath(OrganizationAttributes) },
    attributesRequired: true,
    id: 'forbidden',
  }),
  examples: { organization: { summary: 'An organization', value: { data: { type: 'organizations', attributes: { name: 'Acme Outdoors' } } } } },
};

export const ACCOUNT_CREATE_REQUEST = {
  schema: requestDocument('AccountCreateDocument', {
    type: 'accounts',
    description: '`{data: {type: "accounts", attributes: {name}, relationships?: {organizations}}}`',
    attributes: { $ref: getSchemaPath(AccountAttributes) },
    attributesRequired: true,
    id: 'forbidden',
    relationships: { organizations: toManyRequest('organizations', 'The organizations the account is a member of (an unknown one is a 404 with its pointer).') },
  }),
  examples: {
    account: {
      summary: 'An account, member of one organization',
      value: {
        data: {
          type: 'accounts',
          attributes: { name: 'Ada' },
          relationships: { organizations: { data: [{ type: 'organizations', id: EXAMPLE_IDS.organizations }] } },
        },
      },
    },
  },
};

export const TOKEN_CREATE_REQUEST = {
  schema: requestDocument('TokenCreateDocument', {
    type: 'tokens',
    description: 'Optional: `{data: {type: "tokens", attributes: {expires}}}`; without it, the token never expires.',
    attributes: { $ref: getSchemaPath(TokenAttributes) },
    id: 'forbidden',
  }),
  examples: {
    expiring: { summary: 'A token that expires', value: { data: { type: 'tokens', attributes: { expires: '2099-01-01T00:00:00Z' } } } },
    forever: { summary: 'A token that never expires', value: { data: { type: 'tokens', attributes: { expires: null } } } },
  },
};
