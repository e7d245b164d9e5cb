import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';
import { EVENT_FIELDS } from './event.resource.js';

/** `GET /events/`: the X-Twin twin's timeline, filtered (docs/API.md, section 14). */
export const TIMELINE_QUERY = declareQuery(
  {
    name: param.text('Events of this name (exact match).'),
    category: param.text('Events of this category (exact match).'),
    since: param.timestamp('From this time on (inclusive), ISO 8601.', '2026-11-21T00:00:00Z'),
    until: param.timestamp('Before this time (exclusive), ISO 8601.', '2026-11-22T00:00:00.000000Z'),
  },
  { paginated: true, cursor: true, sort: ['timestamp'], fields: { events: EVENT_FIELDS } },
);

export type TimelineQuery = QueryOf<typeof TIMELINE_QUERY.parameters, true>;

/** `GET /events/stream`: only the changes of events of this name and/or category (what the timeline's filters mean). */
export const STREAM_QUERY = declareQuery({
  name: param.text('Only changes of events of this name (exact match; a deletion by the name the event had).'),
  category: param.text('Only changes of events of this category (exact match).'),
});
export type StreamQuery = QueryOf<typeof STREAM_QUERY.parameters>;

/** `GET /events/<EVENT_ID>`: sparse fieldsets only. */
export const EVENT_QUERY = declareQuery({}, { fields: { events: EVENT_FIELDS } });
export type EventQuery = QueryOf<typeof EVENT_QUERY.parameters>;
