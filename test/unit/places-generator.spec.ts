import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePlace, generatePlaces, writePlacesFile } from '../../src/places/place-generator';
import { mapFeature } from '../../src/places/place-mapping';
import { Prng } from '../../src/places/prng';

describe('place generator', () => {
  it('is deterministic: the same seed gives the same places, another seed other places', () => {
    const a = [...generatePlaces('42', 50)];
    const b = [...generatePlaces('42', 50)];
    const c = [...generatePlaces('43', 50)];
    expect(JSON.stringify(a)).toEqual(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toEqual(JSON.stringify(c));
    expect(a.filter((place, i) => place.geometry.coordinates[0] === c[i].geometry.coordinates[0])).toHaveLength(0);
  });

  it('gives feature i the same content whatever the count', () => {
    expect(generatePlace('seed', 7)).toEqual([...generatePlaces('seed', 10)][7]);
  });

  it('makes places the importer accepts, with unique place ids, near real cities', () => {
    const places = [...generatePlaces('valid', 2000)];
    const ids = new Set(places.map((place) => place.properties.place_id));
    expect(ids.size).toBe(places.length);
    for (const place of places) {
      const mapped = mapFeature(place, { defaultProvider: 'x' });
      if ('error' in mapped) throw new Error(`${place.id}: ${mapped.error}`);
      const [lon, lat] = place.geometry.coordinates;
      expect(Math.abs(lon)).toBeLessThanOrEqual(180);
      expect(Math.abs(lat)).toBeLessThanOrEqual(90);
    }
    const first = places[0].properties as Record<string, any>;
    expect(first.opening_hours.weekday_text).toHaveLength(7);
    expect(first.provider_info.photos.length).toBeGreaterThan(0);
    expect(Object.keys(first.timeTable).every((day) => /^[1-7]$/.test(day))).toBe(true);
    // Clustered: many places share a city.
    const cities = new Set(places.map((place) => place.properties.city));
    expect(cities.size).toBeGreaterThan(20);
    expect(cities.size).toBeLessThan(60);
  });

  it('writes a valid FeatureCollection file, identical for the same seed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'places-'));
    try {
      const progress: number[] = [];
      await writePlacesFile({ count: 1234, out: join(dir, 'a.geojson'), seed: 's', onProgress: (n) => progress.push(n) });
      await writePlacesFile({ count: 1234, out: join(dir, 'b.geojson'), seed: 's' });
      const a = readFileSync(join(dir, 'a.geojson'), 'utf8');
      expect(a).toEqual(readFileSync(join(dir, 'b.geojson'), 'utf8'));
      const parsed = JSON.parse(a);
      expect(parsed.type).toBe('FeatureCollection');
      expect(parsed.features).toHaveLength(1234);
      expect(progress[progress.length - 1]).toBe(1234);
      expect(existsSync(join(dir, 'a.geojson.partial'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a seeded PRNG with a uniform-looking output', () => {
    const rng = new Prng('x');
    const values = Array.from({ length: 10000 }, () => rng.next());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
    expect(new Prng('x').next()).toBe(values[0]);
  });
});
