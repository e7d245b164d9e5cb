import type { ResourceObject } from '../common/json-api/resource.js';
import type { TwinRow } from './twins.repository.js';

/**
 * The three wire forms of a twin (docs/API.md, section 9). Each whitelists its attributes: the list of all
 * twins (dasherized names), the list of own twins (a dasherized subset), and the detail (underscored
 * names, `opening_hours` as the `weekday_text` lines).
 */

const organization = (row: TwinRow) => ({ organization: { data: { type: 'organizations', id: row.organization_id } } });

const personality = (row: TwinRow) => ({ id: row.personality_id, characteristics: row.characteristics, services: row.services });

/** `GET /twins/` */
export function twinListResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      personal: row.personal,
      connections: row.connections,
      personality: personality(row),
      'meta-data': row.meta_data,
      'place-id': row.place_id ?? '',
      provider: row.provider,
      location: row.location,
      'opening-hours': row.opening_hours,
      'phone-number': row.phone_number,
      address: row.address,
      city: row.city,
      state: row.state,
      website: row.website,
      'provider-info': row.provider_info,
    },
    relationships: organization(row),
  };
}

/** `GET /my/twins/` */
export function ownTwinResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      personal: row.personal,
      connections: row.connections,
      personality: personality(row),
      'meta-data': row.meta_data,
    },
    relationships: organization(row),
  };
}

/** `weekday_text` of a Google-Places style opening hours object; [] when absent or malformed. */
export function weekdayText(openingHours: Record<string, unknown> | null | undefined): string[] {
  const lines = openingHours?.weekday_text;
  return Array.isArray(lines) ? lines.filter((line): line is string => typeof line === 'string') : [];
}

/** `GET /twins/<TWIN_ID>/`, and the answers of `POST /my/twins/` and `PATCH /my/twins/<TWIN_ID>/`. */
export function twinDetailResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      tasks_supplied: row.tasks_supplied,
      personal: row.personal,
      meta_data: row.meta_data,
      place_id: row.place_id ?? '',
      provider: row.provider,
      location: row.location,
      opening_hours: weekdayText(row.opening_hours),
      phone_number: row.phone_number,
      address: row.address,
      city: row.city,
      state: row.state,
      website: row.website,
      provider_info: row.provider_info,
      tags: row.tags,
    },
    relationships: organization(row),
  };
}
