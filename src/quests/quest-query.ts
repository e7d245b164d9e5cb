import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';

const TEXT_FILTERS = {
  name: param.text('Names containing this (case-insensitive).'),
  description: param.text('Descriptions containing this (case-insensitive).'),
};

/** `GET /quests/`: the discovery feed (docs/API.md, section 12). */
export const DISCOVERY_QUERY = declareQuery({ owned_by: param.uuid('Creating twin id.'), ...TEXT_FILTERS }, { paginated: true });

/** `GET /my/quests/`: the acting twin's quests and copies. */
export const MY_QUESTS_QUERY = declareQuery(
  {
    is_original: param.boolean('true: the quests it created; false: its copies.'),
    original: param.uuid('Id of an original quest: its copy of that quest.'),
    owned_by: param.uuid('Twin id.'),
    ...TEXT_FILTERS,
  },
  { paginated: true },
);

export type DiscoveryQuery = QueryOf<typeof DISCOVERY_QUERY.parameters, true>;
export type MyQuestsQuery = QueryOf<typeof MY_QUESTS_QUERY.parameters, true>;
