import { generatePlace } from '../../src/places/place-generator';
import { mapFeature } from '../../src/places/place-mapping';
import type { PlaceTwinRow } from '../../src/twins/place-twin';

const options = { defaultProvider: 'geojson' };

function row(feature: unknown): PlaceTwinRow {
  const mapped = mapFeature(feature, options);
  if ('error' in mapped) throw new Error(mapped.error);
  return mapped.row;
}

function error(feature: unknown): string {
  const mapped = mapFeature(feature, options);
  if (!('error' in mapped)) throw new Error('expected the feature to be refused');
  return mapped.error;
}

const minimal = (properties: Record<string, unknown> = {}, geometry: unknown = { type: 'Point', coordinates: [2.35, 48.85] }) => ({
  type: 'Feature',
  id: 'place-1',
  geometry,
  properties: { name: 'Café', ...properties },
});

describe('place mapping', () => {
  it('maps a generated place to twin columns and a meta_data of the spec shape', () => {
    const feature = generatePlace('map', 3);
    const p = feature.properties as Record<string, any>;
    const mapped = row(feature);
    expect(mapped).toEqual(
      expect.objectContaining({
        place_id: p.place_id,
        provider: p.provider,
        name: p.name,
        description: p.description,
        lon: feature.geometry.coordinates[0],
        lat: feature.geometry.coordinates[1],
        characteristics: p.characteristics,
        services: p.services,
        phone_number: p.phone_number,
        address: p.address,
        city: p.city,
        state: p.state,
        website: p.website,
        tags: p.tags,
        opening_hours: p.opening_hours,
        provider_info: p.provider_info,
      }),
    );
    expect(Object.keys(mapped.meta_data).sort()).toEqual(
      [
        'city', 'name', 'phone', 'state', 'street', 'address', 'country', 'service', 'twitter', 'website', 'zipCode', 'category',
        'facebook', 'latitude', 'longitude', 'location', 'place_id', 'provider', 'instagram', 'timeTable', 'priceRange',
        'subCategory', 'phone_number', 'opening_hours', 'provider_info',
      ].sort(),
    );
    expect(mapped.meta_data).toEqual(
      expect.objectContaining({
        latitude: feature.geometry.coordinates[1],
        longitude: feature.geometry.coordinates[0],
        location: { type: 'Point', coordinates: feature.geometry.coordinates },
        service: p.services,
        opening_hours: p.opening_hours.weekday_text,
        timeTable: p.timeTable,
        zipCode: p.zipCode,
        country: p.country,
        category: p.category,
        subCategory: p.subCategory,
        priceRange: p.priceRange,
        provider_info: p.provider_info,
      }),
    );
  });

  it('fills defaults for a minimal feature and makes it a supplier', () => {
    const mapped = row(minimal());
    expect(mapped).toEqual(
      expect.objectContaining({ place_id: 'place-1', provider: 'geojson', name: 'Café', description: '', services: ['place'], tags: [], phone_number: '' }),
    );
    expect(mapped.opening_hours).toEqual({ weekday_text: [] });
    expect(mapped.provider_info).toEqual({ photos: [], reviews: [] });
    expect(mapped.meta_data.timeTable).toEqual({});
    expect(row(minimal({ category: 'Shopping' })).services).toEqual(['Shopping']);
  });

  it('accepts Google-Places spellings', () => {
    const mapped = row(
      minimal({
        place_id: 'ChIJ1',
        formatted_address: '1 Rue X, Paris',
        formatted_phone_number: '01 23',
        international_phone_number: '+33 1 23',
        opening_hours: ['Monday: Closed'],
        photos: [{ width: 1, height: 1, photo_reference: 'r', html_attributions: [] }],
        reviews: [],
        price_level: 2,
        postal_code: '75001',
      }),
    );
    expect(mapped).toEqual(expect.objectContaining({ place_id: 'ChIJ1', address: '1 Rue X, Paris', phone_number: '01 23' }));
    expect(mapped.meta_data).toEqual(expect.objectContaining({ phone: '+33 1 23', priceRange: '$$', zipCode: '75001', opening_hours: ['Monday: Closed'] }));
    expect(mapped.opening_hours).toEqual({ weekday_text: ['Monday: Closed'] });
    expect(mapped.provider_info.photos).toHaveLength(1);
  });

  it('takes a numeric place id and drops a 3rd coordinate (altitude)', () => {
    const mapped = row({ ...minimal({ place_id: 12 }, { type: 'Point', coordinates: [-180, 90, 35] }) });
    expect(mapped).toEqual(expect.objectContaining({ place_id: '12', lon: -180, lat: 90 }));
  });

  it.each([
    ['not an object', [1, 2], /not a GeoJSON Feature/],
    ['wrong type', { ...minimal(), type: 'Point' }, /"type" must be "Feature"/],
    ['no geometry', minimal({}, null), /geometry/],
    ['a polygon', minimal({}, { type: 'Polygon', coordinates: [] }), /must be a Point/],
    ['longitude out of range', minimal({}, { type: 'Point', coordinates: [181, 0] }), /longitude 181/],
    ['latitude out of range', minimal({}, { type: 'Point', coordinates: [0, -90.5] }), /latitude -90.5/],
    ['string coordinates', minimal({}, { type: 'Point', coordinates: ['1', '2'] }), /coordinates/],
    ['one coordinate', minimal({}, { type: 'Point', coordinates: [1] }), /coordinates/],
    ['no name', minimal({ name: '  ' }), /name/],
    ['no properties', { type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] }, properties: null }, /properties/],
    ['no place id', { ...minimal(), id: undefined }, /place id/],
    ['a long name', minimal({ name: 'x'.repeat(256) }), /name is longer than 255/],
    ['a long phone number', minimal({ phone_number: '1'.repeat(65) }), /phone_number is longer than 64/],
    ['services not strings', minimal({ services: [1] }), /services must be an array of strings/],
    ['bad opening hours', minimal({ opening_hours: { weekday_text: 'x' } }), /opening_hours/],
    ['bad photos', minimal({ provider_info: { photos: ['x'] } }), /photos/],
    ['an object as city', minimal({ city: { a: 1 } }), /city must be a string/],
  ])('refuses a feature with %s', (_name, feature, message) => {
    expect(error(feature)).toMatch(message);
  });
});
