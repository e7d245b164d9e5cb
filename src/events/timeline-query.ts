import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';

/** `GET /events/`: the X-Twin twin's timeline, filtered (docs/API.md, section 14). */
export const TIMELINE_QUERY = declareQuery(
  {
    name: param.text('Events of this name (exact match).'),
    category: param.text('Events of this category (exact match).'),
    since: param.timestamp('From this time on (inclusive), ISO 8601.', '2026-11-21T00:00:00Z'),
    until: param.timestamp('Before this time (exclusive), ISO 8601.', '2026-11-22T00:00:00.000000Z'),
  },
  { paginated: true },
);

export type TimelineQuery = QueryOf<typeof TIMELINE_QUERY.parameters, true>;
