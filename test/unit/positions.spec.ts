import fc from 'fast-check';
import { ApiError } from '../../src/common/json-api/api-error';
import { AggregateApiError } from '../../src/common/json-api/error-mapper';
import { readPositionOperation, readPositionUpload, utcDay, utcDaysOf } from '../../src/twins/positions/position-body';
import { distanceToChord, simplifyTrack, type LonLat } from '../../src/twins/positions/track-line';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const WINDOW = { now: NOW, retentionDays: 90 };

/** A valid position's attributes, as a device sends them. */
const attributes = fc.record(
  {
    coordinates: fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
    occurred: fc.integer({ min: NOW - 89 * 86_400_000, max: NOW + 3_600_000 }).map((ms) => new Date(ms).toISOString()),
    accuracy: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: null }),
    speed: fc.option(fc.double({ min: 0, max: 400, noNaN: true }), { nil: null }),
    heading: fc.option(fc.double({ min: 0, max: 359.999, noNaN: true }), { nil: null }),
    altitude: fc.option(fc.double({ min: -500, max: 9000, noNaN: true }), { nil: null }),
  },
  { requiredKeys: ['coordinates', 'occurred'] },
);

describe('reading positions', () => {
  it('accepts every valid position and keeps each value as sent', () => {
    fc.assert(
      fc.property(fc.array(attributes, { minLength: 1, maxLength: 20 }), (sent) => {
        const read = readPositionUpload({ data: sent.map((a) => ({ type: 'positions', attributes: a })) }, WINDOW);
        expect(read.map((p) => [p.lon, p.lat])).toEqual(sent.map((a) => a.coordinates));
        expect(read.map((p) => p.occurred)).toEqual(sent.map((a) => a.occurred));
        expect(read.map((p) => p.accuracy)).toEqual(sent.map((a) => a.accuracy ?? null));
        expect(read.map((p) => p.heading)).toEqual(sent.map((a) => a.heading ?? null));
      }),
    );
  });

  it('answers anything else with JSON:API errors, never another exception', () => {
    fc.assert(
      fc.property(fc.anything(), fc.array(fc.anything(), { maxLength: 5 }), (body, data) => {
        for (const candidate of [body, { data }, { data: data.map((attributes) => ({ type: 'positions', attributes })) }]) {
          try {
            readPositionUpload(candidate, WINDOW);
          } catch (error) {
            expect(error instanceof ApiError || error instanceof AggregateApiError).toBe(true);
          }
        }
      }),
    );
  });

  it('names the twin of a batch position and refuses one without', () => {
    const twin = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
    const data = { type: 'positions', attributes: { coordinates: [1, 2], occurred: '2026-11-28T10:00:00Z' }, relationships: { twin: { data: { type: 'twins', id: twin.toUpperCase() } } } };
    expect(readPositionOperation(data, WINDOW).twinId).toBe(twin);
    expect(() => readPositionOperation({ ...data, relationships: undefined }, WINDOW)).toThrow(ApiError);
  });

  it('puts a position into the partition of its UTC day', () => {
    expect(utcDay(Date.parse('2026-11-28T23:30:00-05:00'))).toBe('2026-11-29');
    expect(utcDay(Date.parse('2026-11-28T00:00:00Z'))).toBe('2026-11-28');
    expect(utcDay(Date.parse('1970-01-01T00:00:00Z') - 1)).toBe('1969-12-31');
  });

  it("names each day of an upload's positions once, as utcDay names each position's", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: Date.parse('1969-12-25T00:00:00Z'), max: Date.parse('2027-01-05T00:00:00Z') }), { maxLength: 60 }), (times) => {
        expect(utcDaysOf(times.map((occurredMs) => ({ occurredMs })))).toEqual([...new Set(times.map(utcDay))]);
      }),
    );
  });
});

describe('simplifying a track (Douglas–Peucker in metres)', () => {
  const vertex = fc.tuple(fc.double({ min: 2.3, max: 2.4, noNaN: true }), fc.double({ min: 48.8, max: 48.9, noNaN: true })) as fc.Arbitrary<LonLat>;

  it('keeps the ends, in order, and leaves every dropped vertex within the tolerance of the kept line', () => {
    fc.assert(
      fc.property(fc.array(vertex, { minLength: 0, maxLength: 200 }), fc.double({ min: 0.5, max: 2000, noNaN: true }), (track, tolerance) => {
        const kept = simplifyTrack(track, tolerance);
        if (track.length === 0) return expect(kept).toEqual([]);
        expect(kept[0]).toBe(0);
        expect(kept[kept.length - 1]).toBe(track.length - 1);
        for (let k = 1; k < kept.length; k++) {
          expect(kept[k]).toBeGreaterThan(kept[k - 1]);
          for (let i = kept[k - 1] + 1; i < kept[k]; i++) {
            expect(distanceToChord(track[i], track[kept[k - 1]], track[kept[k]])).toBeLessThanOrEqual(tolerance);
          }
        }
      }),
    );
  });

  it('measures metres on the ground, east-west shrinking with latitude', () => {
    const metre = 1 / 111_195;
    expect(distanceToChord([0, 10 * metre], [-1, 0], [1, 0])).toBeCloseTo(10, 1);
    // At 60°N a degree of longitude is half as long: 10 m east of a north-south chord is 20 m of degrees.
    expect(distanceToChord([20 * metre, 60], [0, 59.9], [0, 60.1])).toBeCloseTo(10, 1);
    // Across the antimeridian the short way round.
    expect(distanceToChord([180, 10 * metre], [179.9, 0], [-179.9, 0])).toBeCloseTo(10, 1);
  });

  it('keeps every vertex without a tolerance', () => {
    expect(simplifyTrack([[0, 0], [1, 1], [2, 2]], 0)).toEqual([0, 1, 2]);
  });
});
