import { twins, type ColumnOf, type Row } from '../database/schema/index.js';

/**
 * A twin made from an imported place (places/place-mapping.ts maps a GeoJSON feature to it; the twins
 * repository writes it). Declared here, beside the table's one writer, so that the importer depends on
 * twins and not the other way round.
 */

/** The twins columns an import of places writes from each feature (the keys of the SQL record, TwinsRepository.upsertPlaces). */
export const IMPORTED_COLUMNS = [
  'place_id', 'provider', 'name', 'description', 'characteristics', 'services', 'meta_data', 'opening_hours',
  'phone_number', 'address', 'city', 'state', 'website', 'provider_info', 'tags',
] as const satisfies readonly ColumnOf<typeof twins>[];

/** One twin as the importer writes it: those columns (typed by the schema) and the point's coordinates. */
export type PlaceTwinRow = Omit<Pick<Row<typeof twins>, (typeof IMPORTED_COLUMNS)[number]>, 'place_id' | 'meta_data' | 'provider_info'> & {
  place_id: string;
  meta_data: PlaceMetaData;
  provider_info: ProviderInfo;
  lon: number;
  lat: number;
};

export interface ProviderInfo {
  photos: Record<string, unknown>[];
  reviews: Record<string, unknown>[];
}

/** The `meta_data` of an imported place: the keys mobile apps read from the twin detail of a place. */
export interface PlaceMetaData {
  city: string;
  name: string;
  phone: string;
  state: string;
  street: string;
  address: string;
  country: string;
  service: string[];
  twitter: string;
  website: string;
  zipCode: string;
  category: string;
  facebook: string;
  latitude: number;
  longitude: number;
  location: { type: 'Point'; coordinates: [number, number] };
  place_id: string;
  provider: string;
  instagram: string;
  timeTable: Record<string, unknown>;
  priceRange: string;
  subCategory: string;
  phone_number: string;
  opening_hours: string[];
  provider_info: ProviderInfo;
}
