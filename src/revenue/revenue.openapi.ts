/** The OpenAPI description of `GET /my/quests/total_revenue`: the contract's bare object, not a JSON:API document. */
import { component, type DocumentSpec } from '../common/openapi/schemas.js';

export const TOTAL_REVENUE: DocumentSpec = {
  schema: component('TotalRevenue', {
    type: 'object',
    description: 'A bare JSON object (labelled `application/vnd.api+json` like every answer), not a JSON:API document.',
    required: ['revenue'],
    properties: { revenue: { type: 'number', minimum: 0, description: 'Summed exactly in the database; three embarks at 0.10 give exactly 0.3.' } },
    additionalProperties: false,
  }),
  example: { revenue: 12.5 },
};
