import type { ResourceIdentifier, ResourceObject } from '../common/json-api/resource.js';
import type { EventRow } from './events.repository.js';

export const EVENT_TYPE = 'events';

export function eventResource(row: EventRow): ResourceObject {
  return {
    type: EVENT_TYPE,
    id: row.id,
    attributes: { name: row.name, category: row.category, data: row.data, timestamp: row.timestamp },
  };
}

export function eventIdentifier(id: string): ResourceIdentifier {
  return { type: EVENT_TYPE, id };
}
