import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';
import { IMAGE_FIELDS } from '../images/image.resource.js';
import { TWIN_FIELDS } from '../twins/twin.resource.js';
import { QUEST_FIELDS, TASK_FIELDS } from './quest.resource.js';

const TEXT_FILTERS = {
  name: param.text('Names containing this (case-insensitive).'),
  description: param.text('Descriptions containing this (case-insensitive).'),
};

/** A quest's twin, original and images may be included, and the fields of each chosen. */
const QUEST_REPRESENTATION = {
  fields: { quests: QUEST_FIELDS, twins: TWIN_FIELDS.list, images: IMAGE_FIELDS },
  include: ['twin', 'original', 'images', 'summary-image'],
};
const QUEST_SORT = ['name', 'created', 'price'];

/** `GET /quests/`: the discovery feed (docs/API.md, section 12). */
export const DISCOVERY_QUERY = declareQuery(
  { owned_by: param.uuid('Creating twin id.'), ...TEXT_FILTERS },
  { paginated: true, cursor: true, sort: QUEST_SORT, ...QUEST_REPRESENTATION },
);

/** `GET /my/quests/`: the acting twin's quests and copies. */
export const MY_QUESTS_QUERY = declareQuery(
  {
    is_original: param.boolean('true: the quests it created; false: its copies.'),
    original: param.uuid('Id of an original quest: its copy of that quest.'),
    owned_by: param.uuid('Twin id.'),
    ...TEXT_FILTERS,
  },
  { paginated: true, cursor: true, sort: QUEST_SORT, ...QUEST_REPRESENTATION },
);

/** `GET /my/quests/<QUEST_ID>`. */
export const QUEST_QUERY = declareQuery({}, QUEST_REPRESENTATION);

/** `GET /quests/<QUEST_ID>/tasks`: a task's place may be included. */
export const TASKS_QUERY = declareQuery({}, { paginated: true, fields: { tasks: TASK_FIELDS, twins: TWIN_FIELDS.list }, include: ['place'] });

export type DiscoveryQuery = QueryOf<typeof DISCOVERY_QUERY.parameters, true>;
export type MyQuestsQuery = QueryOf<typeof MY_QUESTS_QUERY.parameters, true>;
export type QuestQuery = QueryOf<typeof QUEST_QUERY.parameters>;
export type TasksQuery = QueryOf<typeof TASKS_QUERY.parameters, true>;
