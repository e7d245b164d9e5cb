import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/common/auth/tenant';
import type { CountedJson, PageRequest } from '../../src/common/json-api/pagination';
import { rowShape, typed } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { TwinsRepository, type TwinQuery } from '../../src/twins/twins.repository';
import { recordStatements } from '../support/sql-statements';
import { TestApp } from '../support/test-app';

/**
 * TwinsRepository's filter compiler and list paths, straight against the database (both kinds), with
 * exact ids in exact order and exact counts; and the SQL of its important statements, committed as
 * snapshots so a change of a statement shows in review (`npx jest -u <this file>` rewrites them; CI runs
 * with --ci, where a stale or missing snapshot fails).
 *
 * The twins live in a region of their own and carry characteristics made for this run, so other tests'
 * twins in the shared database never match.
 */
const DETAIL = { form: 'detail' } as const;

describe('TwinsRepository (SQL)', () => {
  let app: TestApp;
  let twins: TwinsRepository;
  let sql: Sql;
  let caller: Tenant;
  let other: Tenant;
  const tag = `rt-${randomUUID()}`;
  const tagX = `rt-x-${randomUUID()}`;
  const ids: Record<string, string> = {};

  async function insertTwin(name: string, organization: string, columns: { public?: boolean; services?: string[]; lon?: number; lat?: number; characteristics: string[]; created: string }) {
    const rows = await sql.rows(
      rowShape({ id: 'uuid' }),
      `INSERT INTO twins (organization_id, name, public, services, characteristics, location, created)
       VALUES ($1, $2, $3, $4::text[], $5::text[], CASE WHEN $6::float8 IS NULL THEN NULL ELSE ST_SetSRID(ST_MakePoint($6, $7), 4326) END, $8)
       RETURNING id`,
      [organization, name, columns.public ?? false, columns.services ?? [], columns.characteristics, columns.lon ?? null, columns.lat ?? null, columns.created],
    );
    ids[name] = rows[0].id;
  }

  beforeAll(async () => {
    app = await TestApp.start();
    twins = app.app.get(TwinsRepository);
    sql = app.app.get(Sql);
    caller = (await app.tenant()).asTenant();
    other = (await app.tenant()).asTenant();
    // Created in this order (A1 first); B2 is invisible to the caller (another organization's, neither public nor a supplier).
    await insertTwin('A1', caller.organization.id, { characteristics: [tag, tagX], lon: 150.001, lat: -40.001, created: '2026-01-01T00:00:01Z' });
    await insertTwin('A2', caller.organization.id, { public: true, characteristics: [tag], lon: 150.002, lat: -40.002, created: '2026-01-01T00:00:02Z' });
    await insertTwin('B1', other.organization.id, { public: true, characteristics: [tag, tagX], lon: 150.003, lat: -40.003, created: '2026-01-01T00:00:03Z' });
    await insertTwin('B2', other.organization.id, { characteristics: [tag, tagX], lon: 150.0015, lat: -40.0015, created: '2026-01-01T00:00:04Z' });
    await insertTwin('B3', other.organization.id, { services: ['guide'], characteristics: [tag], created: '2026-01-01T00:00:05Z' });
  });
  afterAll(() => app.close());

  const firstPage: PageRequest = { number: 1, size: 50, offset: 0 };
  const namesOf = (counted: CountedJson, key: 'list' | 'features' = 'list'): string[] => {
    const parsed = JSON.parse(counted.data);
    const items: { id: string }[] = key === 'list' ? parsed : parsed.features;
    const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    return items.map((item) => byId[item.id] ?? `other:${item.id}`);
  };
  const page = async (query: TwinQuery, request = firstPage, tenant = caller) => {
    const counted = await twins.page(tenant, query, request, { form: 'list' });
    return { count: Number(counted.count), names: namesOf(counted) };
  };

  it('filters by characteristics (all of them), within what the caller can see, in created order', async () => {
    expect(await page({ characteristics: [tag] })).toEqual({ count: 4, names: ['A1', 'A2', 'B1', 'B3'] });
    expect(await page({ characteristics: [tag, tagX] })).toEqual({ count: 2, names: ['A1', 'B1'] });
    // The other organization sees its own B2, not the caller's non-public A1.
    expect(await page({ characteristics: [tag, tagX] }, firstPage, other)).toEqual({ count: 2, names: ['B1', 'B2'] });
  });

  it('filters by is_public, is_supplier and organization', async () => {
    expect(await page({ characteristics: [tag], is_public: true })).toEqual({ count: 2, names: ['A2', 'B1'] });
    expect(await page({ characteristics: [tag], is_public: false })).toEqual({ count: 2, names: ['A1', 'B3'] });
    expect(await page({ characteristics: [tag], is_supplier: true })).toEqual({ count: 1, names: ['B3'] });
    expect(await page({ characteristics: [tag], organization: other.organization.id })).toEqual({ count: 2, names: ['B1', 'B3'] });
  });

  it('counts an organization filter alone from twin_counts: the shared twins of another organization, all of one\'s own', async () => {
    // The other organization: B1 and B3 are shared; its bootstrap twin and B2 are not.
    expect(await page({ organization: other.organization.id })).toEqual({ count: 2, names: ['B1', 'B3'] });
    const own = await page({ organization: caller.organization.id });
    expect(own.count).toBe(3); // its bootstrap twin, A1, A2
    expect(own.names.slice(0, 2)).toEqual(['A1', 'A2']); // created before the bootstrap twin
  });

  it('lists the own organization (count from twin_counts), and pages past the end keep the count with no items', async () => {
    const own = await page({ own: true });
    expect(own.count).toBe(3);
    expect(await page({ characteristics: [tag] }, { number: 3, size: 2, offset: 4 })).toEqual({ count: 4, names: [] });
    expect(await page({ characteristics: [tag] }, { number: 2, size: 2, offset: 2 })).toEqual({ count: 4, names: ['B1', 'B3'] });
  });

  it('counts exactly at every page position: a partial last page counts itself, full and empty pages count the filter', async () => {
    const all = ['A1', 'A2', 'B1', 'B3'];
    for (let size = 1; size <= 5; size++) {
      for (let offset = 0; offset <= 6; offset++) {
        const request = { number: Math.floor(offset / size) + 1, size, offset };
        expect({ size, offset, ...(await page({ characteristics: [tag] }, request)) }).toEqual({ size, offset, count: 4, names: all.slice(offset, offset + size) });
      }
    }
    // The map listing: three located twins, its last page holding one.
    const last = await twins.featureCollection(caller, { characteristics: [tag] }, { number: 2, size: 2, offset: 2 });
    expect({ count: Number(last.count), names: namesOf(last, 'features') }).toEqual({ count: 3, names: ['B1'] });
    // Nothing matches: an empty first page counts 0.
    expect(await page({ characteristics: [`rt-none-${randomUUID()}`] })).toEqual({ count: 0, names: [] });
  });

  it('a full page of a filter plans one count: the count reads twins once, beside the page (and a list\'s rows by id)', async () => {
    // The count is read two or three times in the outer SELECT; inlined, each read was its own scan.
    const { call, restore } = recordStatements(sql);
    try {
      const in_bbox = { minLon: 150.0, minLat: -40.01, maxLon: 150.01, maxLat: -40.0 };
      const full = { number: 1, size: 2, offset: 0 };
      // The map's page holds the columns its items read: the page and the count. A list's page holds
      // ids, and its items read the whole rows by id: the page, the rows, the count.
      const statements = [
        { expected: 2, ...(await call(() => twins.featureCollection(caller, { in_bbox }, full))) },
        { expected: 3, ...(await call(() => twins.page(caller, { characteristics: [tag], in_bbox }, full, { form: 'list' }))) },
      ];
      for (const { text, parameters, expected } of statements) {
        const [{ 'QUERY PLAN': plan }] = await sql.rows(rowShape({ 'QUERY PLAN': typed<unknown>() }), `EXPLAIN (FORMAT JSON) ${text}`, parameters);
        const scans = JSON.stringify(plan).match(/"Relation Name":\s*"twins"/g) ?? [];
        expect(scans).toHaveLength(expected);
      }
    } finally {
      restore();
    }
  });

  it('filters by bounding box and by distance, nearest first', async () => {
    const in_bbox = { minLon: 150.0, minLat: -40.01, maxLon: 150.01, maxLat: -40.0 };
    expect(await page({ characteristics: [tag], in_bbox })).toEqual({ count: 3, names: ['A1', 'A2', 'B1'] });
    const point = { lon: 150.0, lat: -40.0 };
    // A1 is ~140 m from the point, A2 ~280 m, B1 ~420 m.
    expect(await page({ characteristics: [tag], point, dist: 300, ordering: 'distance' })).toEqual({ count: 2, names: ['A1', 'A2'] });
    expect(await page({ characteristics: [tag], point, ordering: 'distance', in_bbox })).toEqual({ count: 3, names: ['A1', 'A2', 'B1'] });
  });

  it('orders by shared characteristics with personality, the reference twin left out', async () => {
    const personality = { id: ids.A1, characteristics: [tag, tagX] };
    expect(await page({ personality })).toEqual({ count: 3, names: ['B1', 'A2', 'B3'] });
  });

  it('is_connection keeps the acting twin\'s connections (and false the others)', async () => {
    await sql.query('UPDATE twins SET connections = $2::uuid[] WHERE id = $1', [ids.A1, [ids.B1, ids.B2]]);
    expect(await page({ characteristics: [tag], is_connection: true, actingTwinId: ids.A1 })).toEqual({ count: 1, names: ['B1'] });
    expect(await page({ characteristics: [tag], is_connection: false, actingTwinId: ids.A1 })).toEqual({ count: 3, names: ['A1', 'A2', 'B3'] });
  });

  it('the geo listing: located twins only, as a FeatureCollection', async () => {
    const counted = await twins.featureCollection(caller, { characteristics: [tag] }, firstPage);
    expect(Number(counted.count)).toBe(3);
    expect(namesOf(counted, 'features')).toEqual(['A1', 'A2', 'B1']);
    expect(JSON.parse(counted.data).features[0]).toEqual({
      id: ids.A1,
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [150.001, -40.001] },
      properties: { twin_id: ids.A1, name: 'A1', description: '' },
    });
  });

  it('a page longer than one part of the statement (~32 kB) comes whole and in order, as a list and as a map', async () => {
    const long = `rt-long-${randomUUID()}`;
    // 40 twins of ~4 kB each (multi-byte text): a list page of ~170 kB and a FeatureCollection of ~165 kB.
    const inserted = await sql.rows(
      rowShape({ id: 'uuid', description: 'text' }),
      `INSERT INTO twins (organization_id, name, description, characteristics, location, created)
       SELECT $1, 'long ' || i, i || ' ' || repeat('ü€ "quoted" \\ ', 300), ARRAY[$2], ST_SetSRID(ST_MakePoint(151 + i / 1000.0, -41), 4326),
              '2026-02-01T00:00:00Z'::timestamptz + i * interval '1 second'
         FROM generate_series(1, 40) i
       RETURNING id, description`,
      [caller.organization.id, long],
    );
    const list = await twins.page(caller, { characteristics: [long] }, firstPage, { form: 'list' });
    expect(Number(list.count)).toBe(40);
    expect(Buffer.byteLength(list.data)).toBeGreaterThan(4 * 32_768);
    const items: { id: string; attributes: { description: string } }[] = JSON.parse(list.data);
    expect(items.map((item) => [item.id, item.attributes.description])).toEqual(inserted.map((row) => [row.id, row.description]));
    const map = await twins.featureCollection(caller, { characteristics: [long] }, firstPage);
    const collection: { type: string; features: { id: string; properties: { description: string } }[] } = JSON.parse(map.data);
    expect(collection.type).toBe('FeatureCollection');
    expect(collection.features.map((feature) => [feature.id, feature.properties.description])).toEqual(inserted.map((row) => [row.id, row.description]));
    // With include=organization: the same items, and the organization once.
    const withOrganization = await twins.page(caller, { characteristics: [long] }, firstPage, { form: 'list', includeOrganization: true });
    expect(withOrganization.data).toBe(list.data);
    expect(JSON.parse(withOrganization.included!).map((o: { id: string }) => o.id)).toEqual([caller.organization.id]);
    // Past the end: the count, no items.
    const past = await twins.page(caller, { characteristics: [long] }, { number: 2, size: 50, offset: 50 }, { form: 'list' });
    expect([Number(past.count), past.data]).toEqual([40, '[]']);
  });

  it('the detail: a twin the caller cannot see is not found', async () => {
    expect(JSON.parse((await twins.findVisibleJson(caller, ids.B1, DETAIL))!.data).id).toBe(ids.B1);
    expect(await twins.findVisibleJson(caller, ids.B2, DETAIL)).toBeUndefined();
  });

  it('sends the statements committed in the snapshot', async () => {
    const { statement, restore } = recordStatements(sql);
    try {
      const point = { lon: 150.0, lat: -40.0 };
      const statements = {
        'visible list, unfiltered': await statement(() => twins.page(caller, {}, firstPage, { form: 'list' })),
        'own list': await statement(() => twins.page(caller, { own: true }, firstPage, { form: 'own' })),
        'organization filter': await statement(() => twins.page(caller, { organization: other.organization.id }, firstPage, { form: 'list' })),
        'characteristics and bounding box': await statement(() =>
          twins.page(caller, { characteristics: [tag], in_bbox: { minLon: 150, minLat: -40.01, maxLon: 150.01, maxLat: -40 } }, firstPage, { form: 'list' }),
        ),
        'within a distance, nearest first': await statement(() => twins.page(caller, { point, dist: 300, ordering: 'distance' }, firstPage, { form: 'list' })),
        'geo listing': await statement(() => twins.featureCollection(caller, { in_bbox: { minLon: 150, minLat: -40.01, maxLon: 150.01, maxLat: -40 } }, firstPage)),
        detail: await statement(() => twins.findVisibleJson(caller, ids.A1, DETAIL)),
      };
      for (const [name, text] of Object.entries(statements)) expect(text).toMatchSnapshot(name);
    } finally {
      restore();
    }
  });
});
