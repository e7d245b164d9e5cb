import { ApiError } from '../../src/common/json-api/api-error';
import { OWN_TWIN_LIST_QUERY, TWIN_LIST_QUERY } from '../../src/twins/twin-filters';
import { readBoundingBox, readDistance, readLocation, readLonLat, wantsGeoJson } from '../../src/twins/twin-geo';
import { weekdayText } from '../../src/twins/twin.resource';

/** The ApiError `fn` throws (fails when it throws nothing or something else). */
function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

const P = '/data/attributes/location';

describe('readLocation (GeoJSON Point input)', () => {
  it('accepts a Point and null', () => {
    expect(readLocation({ type: 'Point', coordinates: [2.35, 48.85] }, P)).toEqual({ type: 'Point', coordinates: [2.35, 48.85] });
    expect(readLocation({ type: 'Point', coordinates: [180, -90] }, P)).toEqual({ type: 'Point', coordinates: [180, -90] });
    expect(readLocation(null, P)).toBeNull();
  });

  it.each([
    ['a string', 'Paris', P],
    ['an array', [1, 2], P],
    ['another geometry', { type: 'Polygon', coordinates: [] }, `${P}/type`],
    ['a missing type', { coordinates: [1, 2] }, `${P}/type`],
    ['an extra member', { type: 'Point', coordinates: [1, 2], bbox: [] }, `${P}/bbox`],
    ['missing coordinates', { type: 'Point' }, `${P}/coordinates`],
    ['one coordinate', { type: 'Point', coordinates: [1] }, `${P}/coordinates`],
    ['three coordinates', { type: 'Point', coordinates: [1, 2, 3] }, `${P}/coordinates`],
    ['a string coordinate', { type: 'Point', coordinates: ['1', 2] }, `${P}/coordinates/0`],
    ['a null latitude', { type: 'Point', coordinates: [1, null] }, `${P}/coordinates/1`],
    ['longitude 180.0001', { type: 'Point', coordinates: [180.0001, 0] }, `${P}/coordinates/0`],
    ['longitude -181', { type: 'Point', coordinates: [-181, 0] }, `${P}/coordinates/0`],
    ['latitude 91', { type: 'Point', coordinates: [0, 91] }, `${P}/coordinates/1`],
    ['latitude -90.5', { type: 'Point', coordinates: [0, -90.5] }, `${P}/coordinates/1`],
  ])('refuses %s with a pointer', (_label, value, pointer) => {
    const error = errorOf(() => readLocation(value, P));
    expect(error.status).toBe(400);
    expect(error.source).toEqual({ pointer });
  });
});

describe('spatial query readers', () => {
  it('in_bbox', () => {
    expect(readBoundingBox('-1,2,3.5,4', 'in_bbox')).toEqual({ minLon: -1, minLat: 2, maxLon: 3.5, maxLat: 4 });
    for (const raw of ['1,2,3', '1,2,3,4,5', 'a,2,3,4', '5,0,1,1', '0,5,1,1', '-181,0,0,1', '0,0,1,91', '']) {
      expect(errorOf(() => readBoundingBox(raw, 'in_bbox')).source).toEqual({ parameter: 'in_bbox' });
    }
  });

  it('point and dist', () => {
    expect(readLonLat('13.405,52.52', 'point')).toEqual({ lon: 13.405, lat: 52.52 });
    expect(errorOf(() => readLonLat('52.52', 'point')).source).toEqual({ parameter: 'point' });
    expect(errorOf(() => readLonLat('0,95', 'point')).source).toEqual({ parameter: 'point' });
    expect(readDistance('1500.5', 'dist')).toBe(1500.5);
    expect(errorOf(() => readDistance('-1', 'dist')).source).toEqual({ parameter: 'dist' });
    expect(errorOf(() => readDistance('1e9', 'dist')).source).toEqual({ parameter: 'dist' });
  });

  it('cross-parameter rules', () => {
    expect(TWIN_LIST_QUERY.read({ point: '1,2', dist: '10' })).toEqual({ point: { lon: 1, lat: 2 }, dist: 10, page: {}, fields: {}, include: new Set() });
    expect(TWIN_LIST_QUERY.read({ point: '1,2', ordering: 'distance' })).toEqual({ point: { lon: 1, lat: 2 }, ordering: 'distance', page: {}, fields: {}, include: new Set() });
    expect(errorOf(() => TWIN_LIST_QUERY.read({ dist: '10' })).source).toEqual({ parameter: 'dist' });
    expect(errorOf(() => TWIN_LIST_QUERY.read({ ordering: 'distance' })).source).toEqual({ parameter: 'ordering' });
    expect(errorOf(() => TWIN_LIST_QUERY.read({ point: '1,2' })).source).toEqual({ parameter: 'point' });
    expect(errorOf(() => OWN_TWIN_LIST_QUERY.read({ is_public: 'true' })).source).toEqual({ parameter: 'is_public' });
    expect(TWIN_LIST_QUERY.read({ characteristics: 'a, b', is_public: 'false', page_number: '2' })).toEqual({ characteristics: ['a', 'b'], is_public: false, page: { number: 2 }, fields: {}, include: new Set() });
  });
});

describe('wantsGeoJson', () => {
  it.each([
    [{ 'content-type': 'application/geo+json' }, true],
    [{ 'content-type': 'Application/Geo+JSON; charset=utf-8' }, true],
    [{ accept: 'application/geo+json' }, true],
    [{ accept: 'application/vnd.api+json, application/geo+json;q=0.5' }, true],
    [{ accept: 'application/geo+json;q=0' }, false],
    [{ accept: 'application/vnd.api+json' }, false],
    [{ accept: '*/*' }, false],
    [{}, false],
  ])('%j → %s', (headers, expected) => {
    expect(wantsGeoJson(headers)).toBe(expected);
  });
});

describe('weekdayText', () => {
  it('takes the weekday_text lines of the stored opening hours', () => {
    expect(weekdayText({ open_now: true, weekday_text: ['Monday: 9–5', 'Tuesday: Closed'] })).toEqual(['Monday: 9–5', 'Tuesday: Closed']);
    expect(weekdayText({})).toEqual([]);
    expect(weekdayText({ weekday_text: 'Monday' })).toEqual([]);
    expect(weekdayText(null)).toEqual([]);
  });
});
