import { isFiniteNumber, isPlainObject } from '../common/value-checks.js';
import { twins } from '../database/schema/index.js';
import type { PlaceTwinRow, ProviderInfo } from '../twins/place-twin.js';

/**
 * From one GeoJSON feature of a places file to the columns of a supplier twin, or the reason the
 * feature cannot be imported. Accepts the generator's layout and the usual Google-Places-style
 * spellings (`formatted_address`, `formatted_phone_number`, `photos`/`reviews` at the top level, an
 * `opening_hours` given as the bare array of weekday lines, the feature `id` as place id).
 */

export type MappedFeature = { row: PlaceTwinRow } | { error: string };

export interface MappingOptions {
  /** Provider for features that do not name one. */
  defaultProvider: string;
}

/** Column sizes of the twins table (varchar(n), from the schema): a longer value would fail the whole batch. */
const LIMITS = Object.fromEntries(
  (['name', 'place_id', 'provider', 'phone_number', 'address', 'city', 'state', 'website'] as const).map((column) => [column, twins.columns[column].length]),
) as Record<'name' | 'place_id' | 'provider' | 'phone_number' | 'address' | 'city' | 'state' | 'website', number>;

class InvalidFeature extends Error {}

export function mapFeature(feature: unknown, options: MappingOptions): MappedFeature {
  try {
    return { row: toRow(feature, options) };
  } catch (error) {
    if (error instanceof InvalidFeature) return { error: error.message };
    throw error;
  }
}

function toRow(feature: unknown, options: MappingOptions): PlaceTwinRow {
  if (!isPlainObject(feature)) throw new InvalidFeature('not a GeoJSON Feature object');
  if (feature.type !== 'Feature') throw new InvalidFeature(`"type" must be "Feature"`);
  const [lon, lat] = point(feature.geometry);
  const p = feature.properties;
  if (!isPlainObject(p)) throw new InvalidFeature('"properties" must be an object (with at least a name)');

  const name = typeof p.name === 'string' ? p.name.trim() : '';
  if (name.length === 0) throw new InvalidFeature('properties.name is missing or empty');
  const placeId = identifier(p.place_id, 'properties.place_id') ?? identifier(feature.id, 'id');
  if (placeId === undefined) throw new InvalidFeature('no place id: properties.place_id or the feature "id" is needed to import idempotently');
  const provider = text(p, 'provider') || options.defaultProvider;

  const phoneNumber = text(p, 'phone_number', 'formatted_phone_number', 'international_phone_number', 'phone');
  const phone = text(p, 'phone', 'international_phone_number') || phoneNumber;
  const address = text(p, 'address', 'formatted_address', 'vicinity');
  const city = text(p, 'city');
  const state = text(p, 'state');
  const website = text(p, 'website', 'url');
  const category = text(p, 'category');
  const subCategory = text(p, 'subCategory', 'sub_category');
  const declaredServices = strings(p, 'services', 'service');
  // Bulk-imported places are suppliers (docs/API.md, section 9): a twin provides a service when it has one.
  const services = declaredServices.length > 0 ? declaredServices : [subCategory || category || 'place'];
  const weekdayText = openingLines(p.opening_hours);
  const openingHours = isPlainObject(p.opening_hours) ? { ...p.opening_hours, weekday_text: weekdayText } : { weekday_text: weekdayText };
  const providerInfo = providerInformation(p);
  const timeTable = p.timeTable === undefined || p.timeTable === null ? {} : p.timeTable;
  if (!isPlainObject(timeTable)) throw new InvalidFeature('properties.timeTable must be an object');

  const row: PlaceTwinRow = {
    place_id: placeId,
    provider,
    name,
    description: text(p, 'description'),
    lon,
    lat,
    characteristics: strings(p, 'characteristics'),
    services,
    opening_hours: openingHours,
    phone_number: phoneNumber,
    address,
    city,
    state,
    website,
    provider_info: providerInfo,
    tags: strings(p, 'tags'),
    meta_data: {
      city,
      name,
      phone,
      state,
      street: text(p, 'street'),
      address,
      country: text(p, 'country'),
      service: services,
      twitter: text(p, 'twitter'),
      website,
      zipCode: text(p, 'zipCode', 'zip_code', 'postal_code'),
      category,
      facebook: text(p, 'facebook'),
      latitude: lat,
      longitude: lon,
      location: { type: 'Point', coordinates: [lon, lat] },
      place_id: placeId,
      provider,
      instagram: text(p, 'instagram'),
      timeTable,
      priceRange: priceRange(p),
      subCategory,
      phone_number: phoneNumber,
      opening_hours: weekdayText,
      provider_info: providerInfo,
    },
  };
  for (const [column, limit] of Object.entries(LIMITS)) {
    const value = row[column as keyof typeof LIMITS];
    if (value.length > limit) throw new InvalidFeature(`${column} is longer than ${limit} characters`);
  }
  return row;
}

function point(geometry: unknown): [number, number] {
  if (!isPlainObject(geometry)) throw new InvalidFeature('"geometry" must be a GeoJSON Point (it is missing or null)');
  if (geometry.type !== 'Point') throw new InvalidFeature(`"geometry" must be a Point, not ${JSON.stringify(geometry.type)}`);
  const coordinates = geometry.coordinates;
  if (!Array.isArray(coordinates) || coordinates.length < 2 || coordinates.length > 3 || !coordinates.every((c) => typeof c === 'number' && Number.isFinite(c))) {
    throw new InvalidFeature('geometry.coordinates must be [longitude, latitude] numbers');
  }
  const [lon, lat] = coordinates as number[];
  if (lon < -180 || lon > 180) throw new InvalidFeature(`longitude ${lon} is outside [-180, 180]`);
  if (lat < -90 || lat > 90) throw new InvalidFeature(`latitude ${lat} is outside [-90, 90]`);
  return [lon, lat];
}

function identifier(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (isFiniteNumber(value)) return String(value);
  if (typeof value === 'string') return value;
  throw new InvalidFeature(`${where} must be a string or a number`);
}

/** The first of `keys` present, as a string ('' when none); a present value of another type is refused. */
function text(p: Record<string, unknown>, ...keys: string[]): string {
  for (const key of keys) {
    const value = p[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') return value.trim();
    if (isFiniteNumber(value)) return String(value);
    throw new InvalidFeature(`properties.${key} must be a string`);
  }
  return '';
}

function strings(p: Record<string, unknown>, ...keys: string[]): string[] {
  for (const key of keys) {
    const value = p[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') return value.trim() ? [value.trim()] : [];
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new InvalidFeature(`properties.${key} must be an array of strings`);
    return [...new Set(value.map((item) => item.trim()).filter((item) => item.length > 0))];
  }
  return [];
}

function openingLines(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const lines = isPlainObject(value) ? (value.weekday_text ?? []) : value;
  if (!Array.isArray(lines) || !lines.every((line) => typeof line === 'string')) {
    throw new InvalidFeature('properties.opening_hours must be an object with weekday_text lines, or an array of lines');
  }
  return lines;
}

function providerInformation(p: Record<string, unknown>): ProviderInfo {
  const info = p.provider_info ?? {};
  if (!isPlainObject(info)) throw new InvalidFeature('properties.provider_info must be an object');
  return { photos: objects(info.photos ?? p.photos, 'photos'), reviews: objects(info.reviews ?? p.reviews, 'reviews') };
}

function objects(value: unknown, name: string): Record<string, unknown>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isPlainObject)) throw new InvalidFeature(`properties.provider_info.${name} must be an array of objects`);
  return value;
}

/** `priceRange` as text ("$$"), or Google's numeric `price_level` (0-4) turned into dollar signs. */
function priceRange(p: Record<string, unknown>): string {
  const range = text(p, 'priceRange', 'price_range');
  if (range) return range;
  const level = p.price_level;
  return typeof level === 'number' && Number.isInteger(level) && level >= 0 && level <= 4 ? '$'.repeat(Math.max(1, level)) : '';
}

