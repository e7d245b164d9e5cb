import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePlacesFile } from '../../src/places/place-generator';
import { PlaceImporter, PlaceImportError, SkippedFeature } from '../../src/places/place-importer';
import { TestApp, TestTenant } from '../support/test-app';
import { Sql } from '../../src/database/sql';

/** The import-places pipeline (file → scanner → mapping → batched upsert) on the test database. */
describe('places import', () => {
  const COUNT = 500;
  let service: TestApp;
  let tenant: TestTenant;
  let importer: PlaceImporter;
  let dir: string;
  let file: string;

  const twins = (organizationId: string) =>
    service.dataSource.query(
      `SELECT place_id, name, description, public, owner_account_id, services, meta_data, provider, opening_hours, provider_info, tags,
              city, phone_number, ST_X(location) AS lon, ST_Y(location) AS lat, created, modified
         FROM twins WHERE organization_id = $1 AND place_id IS NOT NULL ORDER BY place_id`,
      [organizationId],
    ) as Promise<Record<string, any>[]>;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Places' });
    importer = new PlaceImporter(service.app.get(Sql));
    dir = mkdtempSync(join(tmpdir(), 'places-e2e-'));
    file = join(dir, 'places.geojson');
    await writePlacesFile({ count: COUNT, out: file, seed: 'e2e' });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await service.close();
  });

  it('imports every place as a public supplier twin with its location and meta_data', async () => {
    const progress: number[] = [];
    const summary = await importer.importFile(tenant.organizationId, file, { batchSize: 128, chunkBytes: 64 * 1024, onProgress: (p) => progress.push(p.features) });
    expect(summary).toEqual(expect.objectContaining({ features: COUNT, inserted: COUNT, updated: 0, unchanged: 0, skipped: 0 }));
    expect(progress[progress.length - 1]).toBe(COUNT);

    const rows = await twins(tenant.organizationId);
    expect(rows).toHaveLength(COUNT);
    const source = JSON.parse(readFileSync(file, 'utf8')).features as Record<string, any>[];
    const feature = source[17];
    const twin = rows.find((row) => row.place_id === feature.properties.place_id)!;
    expect(twin).toEqual(
      expect.objectContaining({
        name: feature.properties.name,
        public: true,
        owner_account_id: null,
        services: feature.properties.services,
        provider: feature.properties.provider,
        city: feature.properties.city,
        phone_number: feature.properties.phone_number,
        tags: feature.properties.tags,
        opening_hours: feature.properties.opening_hours,
        provider_info: feature.properties.provider_info,
      }),
    );
    expect(twin.lon).toBeCloseTo(feature.geometry.coordinates[0], 6);
    expect(twin.lat).toBeCloseTo(feature.geometry.coordinates[1], 6);
    expect(Object.keys(twin.meta_data).sort()).toEqual(
      [
        'address', 'category', 'city', 'country', 'facebook', 'instagram', 'latitude', 'location', 'longitude', 'name', 'opening_hours',
        'phone', 'phone_number', 'place_id', 'priceRange', 'provider', 'provider_info', 'service', 'state', 'street', 'subCategory',
        'timeTable', 'twitter', 'website', 'zipCode',
      ],
    );
    expect(twin.meta_data).toEqual(
      expect.objectContaining({
        location: { type: 'Point', coordinates: feature.geometry.coordinates },
        latitude: feature.geometry.coordinates[1],
        opening_hours: feature.properties.opening_hours.weekday_text,
        provider_info: feature.properties.provider_info,
        timeTable: feature.properties.timeTable,
        service: feature.properties.services,
      }),
    );
    // Usable by spatial queries: the twins around the place include it.
    const near: { n: number }[] = await service.dataSource.query(
      `SELECT count(*)::int AS n FROM twins WHERE organization_id = $1 AND ST_DWithin(location::geography, ST_SetSRID(ST_MakePoint($2, $3), 4326)::geography, 10)`,
      [tenant.organizationId, ...feature.geometry.coordinates],
    );
    expect(near[0].n).toBeGreaterThanOrEqual(1);
  });

  it('is idempotent: the same file again changes nothing, a changed file refreshes the twins in place', async () => {
    const before = await twins(tenant.organizationId);
    const again = await importer.importFile(tenant.organizationId, file, { batchSize: 200 });
    expect(again).toEqual(expect.objectContaining({ features: COUNT, inserted: 0, updated: 0, unchanged: COUNT, skipped: 0 }));
    expect(await twins(tenant.organizationId)).toEqual(before);

    const collection = JSON.parse(readFileSync(file, 'utf8'));
    collection.features[3].properties.name = 'Renamed place';
    collection.features[4].geometry.coordinates = [10.5, 20.25];
    collection.features[5].properties.services = ['repairs'];
    const changed = join(dir, 'changed.geojson');
    writeFileSync(changed, JSON.stringify(collection, null, 1));
    const summary = await importer.importFile(tenant.organizationId, changed, { batchSize: 200 });
    expect(summary).toEqual(expect.objectContaining({ features: COUNT, inserted: 0, updated: 3, unchanged: COUNT - 3 }));

    const after = await twins(tenant.organizationId);
    expect(after).toHaveLength(COUNT);
    const byId = (rows: Record<string, any>[], feature: any) => rows.find((row) => row.place_id === feature.properties.place_id)!;
    expect(byId(after, collection.features[3])).toEqual(expect.objectContaining({ name: 'Renamed place' }));
    expect(byId(after, collection.features[3]).meta_data.name).toBe('Renamed place');
    expect(byId(after, collection.features[3]).modified > byId(before, collection.features[3]).modified).toBe(true);
    expect(byId(after, collection.features[3]).created).toBe(byId(before, collection.features[3]).created);
    expect(byId(after, collection.features[4])).toEqual(expect.objectContaining({ lon: 10.5, lat: 20.25 }));
    expect(byId(after, collection.features[5]).services).toEqual(['repairs']);
    expect(byId(after, collection.features[6])).toEqual(byId(before, collection.features[6]));
  });

  it('skips and reports malformed features by index, and imports the rest', async () => {
    const other = await service.tenant({ organization: 'Places, malformed' });
    const good = (id: string, name = `Place ${id}`) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [4.9, 52.37] }, properties: { name } });
    const text = `{"type":"FeatureCollection","features":[
      ${JSON.stringify(good('a'))},
      {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[200,10]},"properties":{"name":"Out of range"}},
      {"type":"Feature","id":"c","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}},
      {"type":"Feature","id":"d", broken json},
      ${JSON.stringify(good('e', 'Has a NUL \u0000 inside'))},
      ${JSON.stringify(good('f'))},
      ${JSON.stringify(good('a', 'Place a, repeated'))}
    ]}`;
    const malformed = join(dir, 'malformed.geojson');
    writeFileSync(malformed, text);
    const skipped: SkippedFeature[] = [];
    const summary = await importer.importFile(other.organizationId, malformed, { onSkip: (s) => skipped.push(s) });
    expect(summary).toEqual(expect.objectContaining({ features: 7, inserted: 2, skipped: 4, duplicates: 1 }));
    expect(skipped.map((s) => s.index).sort()).toEqual([1, 2, 3, 4]);
    expect(skipped.find((s) => s.index === 1)!.reason).toMatch(/longitude 200/);
    expect(skipped.find((s) => s.index === 2)!.reason).toMatch(/name/);
    expect(skipped.find((s) => s.index === 3)!.reason).toMatch(/not valid JSON/);
    expect(skipped.find((s) => s.index === 4)!.reason).toMatch(/refused by the database/);
    expect(summary.skippedSample).toEqual(skipped);
    const rows = await twins(other.organizationId);
    expect(rows.map((row) => [row.place_id, row.name])).toEqual([
      ['a', 'Place a, repeated'],
      ['f', 'Place f'],
    ]);
  });

  it('keeps organizations apart: the same place ids make separate twins', async () => {
    const other = await service.tenant({ organization: 'Places, second' });
    const summary = await importer.importFile(other.organizationId, file, { batchSize: 1000 });
    expect(summary.inserted).toBe(COUNT);
    expect(await twins(other.organizationId)).toHaveLength(COUNT);
    expect(await twins(tenant.organizationId)).toHaveLength(COUNT);
  });

  it('refuses an unknown organization, a missing file and a file that is not a FeatureCollection', async () => {
    await expect(importer.importFile('00000000-0000-4000-8000-000000000000', file)).rejects.toThrow(PlaceImportError);
    await expect(importer.importFile('not-a-uuid', file)).rejects.toThrow(/organization not-a-uuid does not exist/);
    await expect(importer.importFile(tenant.organizationId, join(dir, 'missing.geojson'))).rejects.toThrow(/no such file/);
    const truncated = join(dir, 'truncated.geojson');
    writeFileSync(truncated, readFileSync(file).subarray(0, 5000));
    await expect(importer.importFile(tenant.organizationId, truncated)).rejects.toThrow(/truncated/);
    // The connection is still usable afterwards.
    expect(await twins(tenant.organizationId)).toHaveLength(COUNT);
  });
});
