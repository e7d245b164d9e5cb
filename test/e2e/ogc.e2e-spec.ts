import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { CONFORMANCE_CLASSES } from '../../src/ogc/ogc.resource';
import { FEATURE_PROPERTIES } from '../../src/ogc/ogc-queryables';
import { expectError, TestApp, TestTenant } from '../support/test-app';

const run = promisify(execFile);
const GEO_JSON = 'application/geo+json';
/** A media type, with or without parameters (large answers name their charset). */
const mediaType = (type: string) => new RegExp(`^${type.replace(/[+.]/g, '\\$&')}(;|$)`);
const point = (lon: number, lat: number) => ({ type: 'Point', coordinates: [lon, lat] });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The OGC API – Features service (`/ogc`, docs/MAPS.md) through the whole HTTP stack: the documents'
 * exact shapes, items pages (bbox, datetime, the list filters, keyset links), one item, the visibility
 * rule between two organizations, CQL2 filters in both encodings against the same predicates written
 * by hand for PostGIS (a property test), their errors; and real clients no one here wrote: GDAL's
 * OAPIF driver (`ogrinfo`, `ogr2ogr` from Debian's gdal-bin) against the service on a port. The suite
 * works in a box of its own in the Southern Ocean (drawn at random, so an earlier run's twins on a
 * reused database are elsewhere): its counts there are exact.
 */
describe('OGC API – Features (/ogc)', () => {
  let service: TestApp;
  let owner: TestTenant;
  let stranger: TestTenant;
  /** Coordinates of at most 6 decimals, which GeoJSON gives back exactly. */
  const round = (value: number) => Math.round(value * 1e6) / 1e6;
  const W = round(-120 + Math.random() * 60);
  const S = round(-60 + Math.random() * 5);
  const BOX = { w: W, s: S, e: round(W + 0.1), n: round(S + 0.1) };
  const BBOX = `${BOX.w},${BOX.s},${BOX.e},${BOX.n}`;
  const at = (dx: number, dy: number) => point(round(BOX.w + dx), round(BOX.s + dy));
  const ids: Record<string, string> = {};

  const get = (tenant: TestTenant, url: string, headers: Record<string, string> = {}) => service.inject({ method: 'GET', url, headers: { ...tenant.headers(), ...headers } });
  const items = async (tenant: TestTenant, query: string) => {
    const response = await get(tenant, `/ogc/collections/twins/items?${query}`);
    if (response.statusCode !== 200) throw new Error(`items ?${query}: ${response.statusCode} ${response.body}`);
    expect(response.headers['content-type']).toMatch(mediaType(GEO_JSON));
    return response.json() as { type: string; features: { id: string; properties: Record<string, unknown>; geometry: unknown }[]; numberReturned: number; timeStamp: string; links: { rel: string; href: string; type: string }[] };
  };
  const idsOf = async (tenant: TestTenant, query: string) => (await items(tenant, query)).features.map((f) => f.id);
  const pathOf = (href: string) => href.replace(/^http:\/\/[^/]+/, '');

  beforeAll(async () => {
    service = await TestApp.start();
    owner = await service.tenant({ organization: 'OGC owner' });
    stranger = await service.tenant({ organization: 'OGC stranger' });
    const create = async (key: string, tenant: TestTenant, attributes: Record<string, unknown>) => (ids[key] = await service.createTwin(tenant, attributes));
    await create('cafe', owner, { name: 'Ogc Café Alpha', public: true, city: 'Lima', location: at(0.01, 0.01) });
    await create('mine', owner, { name: 'Ogc private beta', city: 'Oslo', location: at(0.02, 0.02), personal: true });
    await create('shop', owner, { name: 'Ogc Shop', location: at(0.03, 0.03), personality: { services: ['repairs'], characteristics: ['tools'] } });
    await create('nowhere', owner, { name: 'Ogc nowhere', public: true });
    await create('theirs', stranger, { name: 'Ogc their public', public: true, city: 'Pune', location: at(0.04, 0.04) });
    await create('secret', stranger, { name: 'Ogc their secret', city: 'Lima', location: at(0.05, 0.05) });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  describe('documents', () => {
    it('the landing page links the API definition, the conformance classes and the collections', async () => {
      const response = await get(owner, '/ogc');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(mediaType('application/json'));
      const base = 'http://localhost/ogc';
      expect(response.json()).toEqual({
        title: 'Digital twins',
        description: expect.any(String),
        links: [
          { href: base, rel: 'self', type: 'application/json', title: 'This document' },
          { href: `${base}/api`, rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.0', title: 'The API definition (OpenAPI 3.0)' },
          { href: 'http://localhost/docs', rel: 'service-doc', type: 'text/html', title: "The service's documentation" },
          { href: `${base}/conformance`, rel: 'conformance', type: 'application/json', title: 'The conformance classes implemented' },
          { href: `${base}/collections`, rel: 'data', type: 'application/json', title: 'The collections' },
        ],
      });
      expect((await get(owner, '/ogc/')).statusCode).toBe(200);
    });

    it('conformance names Part 1 (core, GeoJSON, OpenAPI 3.0), Part 3 and the CQL2 classes implemented', async () => {
      const response = await get(owner, '/ogc/conformance');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ conformsTo: CONFORMANCE_CLASSES });
      expect(CONFORMANCE_CLASSES).toEqual(
        expect.arrayContaining([
          'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
          'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
          'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
          'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
          'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
        ]),
      );
    });

    it('the twins collection has the extent of the twins the caller sees', async () => {
      const response = await get(owner, '/ogc/collections/twins');
      expect(response.statusCode).toBe(200);
      const collection = response.json();
      const [[{ west, south, east, north, first, latest }]] = [
        await service.dataSource.query(
          `SELECT ST_XMin(e.b) AS west, ST_YMin(e.b) AS south, ST_XMax(e.b) AS east, ST_YMax(e.b) AS north,
                  to_char(e.f AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS first, to_char(e.l AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS latest
             FROM (SELECT ST_Extent(location) AS b, min(modified) AS f, max(modified) AS l FROM twins
                    WHERE location IS NOT NULL AND (public OR cardinality(services) > 0 OR organization_id = $1)) e`,
          [owner.organizationId],
        ),
      ];
      const base = 'http://localhost/ogc/collections/twins';
      expect(collection).toEqual({
        id: 'twins',
        title: 'Twins',
        description: expect.any(String),
        itemType: 'feature',
        crs: ['http://www.opengis.net/def/crs/OGC/1.3/CRS84'],
        storageCrs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
        extent: {
          spatial: { bbox: [[west, south, east, north]], crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' },
          temporal: { interval: [[first, latest]], trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian' },
        },
        links: [
          { href: base, rel: 'self', type: 'application/json', title: 'This collection' },
          { href: `${base}/items`, rel: 'items', type: GEO_JSON, title: 'The twins as GeoJSON features' },
          { href: `${base}/queryables`, rel: 'http://www.opengis.net/def/rel/ogc/1.0/queryables', type: 'application/schema+json', title: 'What filters may name' },
          { href: `${base}/queryables`, rel: 'queryables', type: 'application/schema+json', title: 'What filters may name' },
        ],
      });
      const all = await get(owner, '/ogc/collections');
      expect(all.json()).toEqual({ links: [{ href: 'http://localhost/ogc/collections', rel: 'self', type: 'application/json', title: 'The collections' }], collections: [collection] });
    });

    it('queryables: a JSON Schema of the scalar list attributes, organization and geometry', async () => {
      const response = await get(owner, '/ogc/collections/twins/queryables');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(mediaType('application/schema+json'));
      const schema = response.json();
      expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2019-09/schema', $id: 'http://localhost/ogc/collections/twins/queryables', type: 'object', additionalProperties: false });
      expect(Object.keys(schema.properties)).toEqual(['geometry', 'created', 'modified', 'name', 'description', 'personal', 'place-id', 'provider', 'phone-number', 'address', 'city', 'state', 'website', 'organization']);
      expect(schema.properties.modified).toEqual({ title: 'modified', type: 'string', format: 'date-time', description: expect.any(String) });
      expect(schema.properties.geometry).toMatchObject({ format: 'geometry-point' });
    });

    it('the API definition is the OpenAPI 3.0 document of the /ogc routes, relative to the landing page', async () => {
      const response = await get(owner, '/ogc/api');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(mediaType('application/vnd.oai.openapi+json;version=3.0'));
      const api = response.json();
      expect(api.openapi).toMatch(/^3\.0\./);
      expect(api.servers).toEqual([{ url: 'http://localhost/ogc', description: 'The landing page' }]);
      expect(Object.keys(api.paths).sort()).toEqual(['/', '/api', '/collections', '/collections/twins', '/collections/twins/items', '/collections/twins/items/{id}', '/collections/twins/queryables', '/conformance']);
      const parameters = api.paths['/collections/twins/items'].get.parameters as { name: string; schema: { enum?: string[] } }[];
      expect(parameters.find((p) => p.name === 'filter-lang')?.schema.enum).toEqual(['cql2-text', 'cql2-json', 'cql-text']);
      expect(parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['bbox', 'datetime', 'limit', 'filter', 'is_public', 'is_supplier', 'characteristics']));
    });

    it('needs the same token and organization as GET /twins/', async () => {
      for (const path of ['/ogc', '/ogc/conformance', '/ogc/collections/twins/items']) {
        expectError(await service.inject({ method: 'GET', url: path }), 401);
        expectError(await service.inject({ method: 'GET', url: path, headers: { authorization: `Token ${owner.token}` } }), 400, { header: 'X-Organization' });
        expectError(await service.inject({ method: 'GET', url: path, headers: { ...owner.headers(), 'x-organization': stranger.organizationId } }), 403, { header: 'X-Organization' });
      }
    });
  });

  describe('items', () => {
    it('a FeatureCollection at the top level: the located twins the caller sees, in id order, with the list form\'s attributes', async () => {
      const page = await items(owner, `bbox=${BBOX}`);
      const expected = [ids.cafe, ids.mine, ids.shop, ids.theirs].sort();
      expect(page).toEqual({
        type: 'FeatureCollection',
        features: expect.any(Array),
        numberReturned: 4,
        timeStamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
        links: [{ href: `http://localhost/ogc/collections/twins/items?bbox=${BBOX}`, rel: 'self', type: GEO_JSON }],
      });
      expect(page.features.map((f) => f.id)).toEqual(expected);
      const cafe = page.features.find((f) => f.id === ids.cafe)!;
      expect(cafe.geometry).toEqual(at(0.01, 0.01));
      expect(Object.keys(cafe.properties)).toEqual(FEATURE_PROPERTIES);
      expect(cafe).toEqual({
        type: 'Feature',
        id: ids.cafe,
        geometry: at(0.01, 0.01),
        properties: expect.objectContaining({ name: 'Ogc Café Alpha', city: 'Lima', personal: false, 'place-id': '', organization: owner.organizationId, created: expect.any(String) }),
      });
      // The same attributes as the list form of GET /twins/.
      const listed = (await get(owner, `/twins/?in_bbox=${BBOX}&is_public=true`)).json().data.find((t: { id: string }) => t.id === ids.cafe);
      const { location: _location, ...attributes } = listed.attributes;
      expect(cafe.properties).toEqual({ ...attributes, organization: owner.organizationId });
      // The other organization sees the public twins and its own, never the owner's private ones.
      expect(await idsOf(stranger, `bbox=${BBOX}`)).toEqual([ids.cafe, ids.shop, ids.theirs, ids.secret].sort());
    });

    it('properties= chooses the properties (none when empty)', async () => {
      const page = await items(owner, `bbox=${BBOX}&properties=name,organization&limit=1`);
      expect(Object.keys(page.features[0].properties)).toEqual(['name', 'organization']);
      expect((await items(owner, `bbox=${BBOX}&properties=&limit=1`)).features[0].properties).toEqual({});
      expectError(await get(owner, '/ogc/collections/twins/items?properties=name,location'), 400, { parameter: 'properties' });
    });

    it('pages by keyset: next links to the end, prev links back, each page holding limit features', async () => {
      const all = [ids.cafe, ids.mine, ids.shop, ids.theirs].sort();
      let page = await items(owner, `bbox=${BBOX}&limit=3`);
      expect(page.features.map((f) => f.id)).toEqual(all.slice(0, 3));
      expect(page.links.map((l) => l.rel)).toEqual(['self', 'next']);
      const next = page.links.find((l) => l.rel === 'next')!;
      expect(next.href).toMatch(/limit=3&page_after=[\w-]+\.[\w-]+$/);
      page = await items(owner, pathOf(next.href).split('?')[1]);
      expect(page.features.map((f) => f.id)).toEqual(all.slice(3));
      expect(page.numberReturned).toBe(1);
      expect(page.links.map((l) => l.rel)).toEqual(['self', 'prev']);
      const back = await items(owner, pathOf(page.links.find((l) => l.rel === 'prev')!.href).split('?')[1]);
      expect(back.features.map((f) => f.id)).toEqual(all.slice(0, 3));
      expect(back.links.map((l) => l.rel)).toEqual(['self', 'next']);
      // A cursor is the list's own: altered, or of another list, it is a 400 naming its parameter.
      expectError(await get(owner, `/ogc/collections/twins/items?page_after=${encodeURIComponent(next.href.split('page_after=')[1].replace(/.$/, 'x'))}`), 400, { parameter: 'page_after' });
      expectError(await get(owner, '/ogc/collections/twins/items?page_after=a&page_before=b'), 400, { parameter: 'page_before' });
    });

    it('takes the list filters of GET /twins/', async () => {
      expect(await idsOf(owner, `bbox=${BBOX}&is_public=true`)).toEqual([ids.cafe, ids.theirs].sort());
      expect(await idsOf(owner, `bbox=${BBOX}&is_supplier=true`)).toEqual([ids.shop]);
      expect(await idsOf(owner, `bbox=${BBOX}&is_personal=true`)).toEqual([ids.cafe, ids.mine, ids.shop].sort());
      expect(await idsOf(owner, `bbox=${BBOX}&characteristics=tools`)).toEqual([ids.shop]);
      expect(await idsOf(owner, `bbox=${BBOX}&organization=${stranger.organizationId}`)).toEqual([ids.theirs]);
      expect(await idsOf(owner, `bbox=${BBOX}&is_connection=false`).catch((e: Error) => e.message)).toMatch(/^items .*: 400 .*X-Twin/);
      expectError(await get(owner, '/ogc/collections/twins/items?is_public=perhaps'), 400, { parameter: 'is_public' });
      expectError(await get(owner, '/ogc/collections/twins/items?colour=red'), 400, { parameter: 'colour' });
    });

    it('datetime filters on modified: instants, dates and open intervals', async () => {
      const [{ modified }] = await service.dataSource.query(`SELECT to_char(modified AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS modified FROM twins WHERE id = $1`, [ids.shop]);
      expect(await idsOf(owner, `bbox=${BBOX}&datetime=${modified}`)).toEqual([ids.shop]);
      const later = (await idsOf(owner, `bbox=${BBOX}&datetime=${modified}/..`)).sort();
      expect(later).toEqual(expect.arrayContaining([ids.shop, ids.theirs]));
      expect(later).not.toContain(ids.cafe);
      expect(await idsOf(owner, `bbox=${BBOX}&datetime=../${modified}`)).toEqual(expect.arrayContaining([ids.cafe, ids.shop]));
      expect(await idsOf(owner, `bbox=${BBOX}&datetime=${modified.slice(0, 10)}`)).toHaveLength(4);
      expect(await idsOf(owner, `bbox=${BBOX}&datetime=2000-01-01/2000-12-31`)).toEqual([]);
      for (const bad of ['yesterday', '2026-02-30', '2026-01-02/2026-01-01', 'a/b/c']) {
        expectError(await get(owner, `/ogc/collections/twins/items?datetime=${bad}`), 400, { parameter: 'datetime' });
      }
    });

    it('bbox, limit: their values and their errors', async () => {
      expect(await idsOf(owner, `bbox=${BOX.w},${BOX.s},${BOX.w + 0.025},${BOX.s + 0.025}`)).toEqual([ids.cafe, ids.mine].sort());
      // Six numbers: with heights, which are ignored.
      expect(await idsOf(owner, `bbox=${BOX.w},${BOX.s},-10,${BOX.w + 0.025},${BOX.s + 0.025},10`)).toEqual([ids.cafe, ids.mine].sort());
      // Past the maximum, limit is read as the maximum (OGC API – Features Part 1), not refused.
      expect((await items(owner, `bbox=${BBOX}&limit=20000`)).numberReturned).toBe(4);
      for (const [parameter, value] of [['bbox', '1,2,3'], ['bbox', '0,10,1,5'], ['bbox', '0,0,200,1'], ['limit', '0'], ['limit', '1.5'], ['filter-lang', 'sql'], ['filter-crs', 'EPSG:3857']]) {
        expectError(await get(owner, `/ogc/collections/twins/items?${parameter}=${value}`), 400, { parameter });
      }
    });

    it('one item: a visible located twin; anything else is a 404', async () => {
      const response = await get(owner, `/ogc/collections/twins/items/${ids.mine}`);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(mediaType(GEO_JSON));
      expect(response.json()).toMatchObject({ type: 'Feature', id: ids.mine, geometry: at(0.02, 0.02), properties: { name: 'Ogc private beta', personal: true, organization: owner.organizationId } });
      expect((await get(owner, `/ogc/collections/twins/items/${ids.theirs}`)).statusCode).toBe(200);
      for (const id of [ids.secret, ids.nowhere, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        expectError(await get(owner, `/ogc/collections/twins/items/${id}`), 404);
      }
      expectError(await get(stranger, `/ogc/collections/twins/items/${ids.mine}`), 404);
    });
  });

  describe('CQL2 filters', () => {
    const filtered = (tenant: TestTenant, filter: string, lang = 'cql2-text') => idsOf(tenant, `bbox=${BBOX}&filter-lang=${lang}&filter=${encodeURIComponent(filter)}`);

    it('text and JSON: comparisons, LIKE, IN, BETWEEN, IS NULL, the spatial functions', async () => {
      expect(await filtered(owner, "name LIKE 'Ogc Caf%'")).toEqual([ids.cafe]);
      expect(await filtered(owner, JSON.stringify({ op: 'like', args: [{ property: 'name' }, 'Ogc Caf%'] }), 'cql2-json')).toEqual([ids.cafe]);
      expect(await filtered(owner, "city IN ('Lima', 'Pune')")).toEqual([ids.cafe, ids.theirs].sort());
      expect(await filtered(owner, "CASEI(city) = 'oslo' OR personal = true")).toEqual([ids.cafe, ids.mine, ids.shop].filter((id) => id === ids.mine).sort());
      expect(await filtered(owner, `S_INTERSECTS(geometry, BBOX(${BOX.w}, ${BOX.s}, ${BOX.w + 0.025}, ${BOX.s + 0.025}))`)).toEqual([ids.cafe, ids.mine].sort());
      const [e, n] = [round(BOX.w + 0.035), round(BOX.s + 0.035)];
      expect(await filtered(owner, `S_WITHIN(geometry, POLYGON((${BOX.w} ${BOX.s}, ${e} ${BOX.s}, ${e} ${n}, ${BOX.w} ${n}, ${BOX.w} ${BOX.s}))) AND NOT name BETWEEN 'Ogc pr' AND 'Ogc pz'`)).toEqual([
        ids.cafe,
        ids.shop,
      ].sort());
      // 1,600 m from the café: the private twin (≈1,570 m away at this latitude? measured by PostGIS) and the café itself.
      const [{ near }] = await service.dataSource.query(
        `SELECT array_agg(id::text ORDER BY id) AS near FROM twins WHERE id = ANY ($1::uuid[]) AND ST_DWithin(location::geography, ST_SetSRID(ST_MakePoint($2, $3), 4326)::geography, 1600, false)`,
        [Object.values(ids), BOX.w + 0.01, BOX.s + 0.01],
      );
      expect(await filtered(owner, `S_DWITHIN(geometry, POINT(${BOX.w + 0.01} ${BOX.s + 0.01}), 1600)`)).toEqual(near.filter((id: string) => id !== ids.secret));
      expect(await filtered(stranger, `organization = '${owner.organizationId}'`)).toEqual([ids.cafe, ids.shop].sort());
    });

    it.each([
      ["colour = 'red'", 'cql2-text', /filter: Unknown queryable "colour"; the queryables are geometry, created/],
      ['name = 5', 'cql2-text', /filter: Type mismatch in =: name is a string, 5 is a number/],
      ["name = 'x' AND", 'cql2-text', /filter: Syntax error at character 15/],
      ['{"op": "=", "args": [{"property": "name"}]}', 'cql2-json', /filter: "=" takes 2 arguments, got 1/],
      ["S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1, 0 1)))", 'cql2-text', /filter: Polygon ring 1: a ring must end where it starts/],
    ])('%s (%s) is a 400 naming filter and the problem', async (filter, lang, detail) => {
      const error = expectError(await get(owner, `/ogc/collections/twins/items?filter-lang=${lang}&filter=${encodeURIComponent(filter)}`), 400, { parameter: 'filter' });
      expect(error.detail).toMatch(detail);
    });

    it('cql-text (GDAL 3.6) is the same grammar, reading quoted instants compared with timestamps', async () => {
      expect(await filtered(owner, "(name = 'Ogc Shop') AND (modified > '2000-01-01T00:00:00Z')", 'cql-text')).toEqual([ids.shop]);
      expectError(await get(owner, `/ogc/collections/twins/items?filter=${encodeURIComponent("modified > '2000-01-01T00:00:00Z'")}`), 400, { parameter: 'filter' });
    });

    /**
     * Random filters over the queryables, sent as CQL2 text and as CQL2 JSON, give exactly the ids the same
     * predicate gives when written by hand for PostGIS (literals inlined, geometries as WKT): the parser,
     * the compiler and the binding of values against an independent translation.
     */
    it('random filters give exactly the ids PostGIS gives for the same predicate', async () => {
      // A few more twins of varied values, so that predicates match some and not others.
      const cities = ['Lima', 'Oslo', 'Pune', "Sa'na", ''];
      for (let i = 0; i < 12; i++) {
        await service.createTwin(i % 3 === 0 ? stranger : owner, {
          name: `Ogc ${['Alpha', 'beta', 'Gamma', 'delta_1', 'Ep%silon', 'Zeta'][i % 6]} ${i}`,
          city: cities[i % cities.length],
          personal: i % 2 === 0,
          public: i % 4 !== 1,
          description: i % 5 === 0 ? 'Open late' : '',
          location: at(0.005 + (i % 4) * 0.02, 0.005 + Math.floor(i / 4) * 0.03),
        });
      }
      const [{ mid }] = await service.dataSource.query(
        `SELECT to_char(percentile_disc(0.5) WITHIN GROUP (ORDER BY created) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS mid FROM twins WHERE location && ST_MakeEnvelope($1, $2, $3, $4, 4326)`,
        [BOX.w, BOX.s, BOX.e, BOX.n],
      );
      const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
      type Node = { text: string; json: unknown; sql: string };
      const x = (dx: number) => BOX.w + dx;
      const y = (dy: number) => BOX.s + dy;

      const strings: [string, string][] = [['name', 't.name'], ['city', 't.city'], ['description', 't.description'], ['place-id', "coalesce(t.place_id, '')"]];
      const stringProperty = fc.constantFrom(...strings).map(([name, sql]): Node => ({ text: `"${name}"`, json: { property: name }, sql }));
      const stringValue = fc.constantFrom('Lima', 'Oslo', "Sa'na", '', 'Ogc Shop', 'Ogc beta 1', 'Open late', 'm').map((s): Node => ({ text: q(s), json: s, sql: `${q(s)}::text` }));
      const caseiProperty = stringProperty.map((p): Node => ({ text: `CASEI(${p.text})`, json: { op: 'casei', args: [p.json] }, sql: `lower(${p.sql})` }));
      const comparison = fc.constantFrom('=', '<>', '<', '>', '<=', '>=');
      const pattern = fc.constantFrom('Ogc%', '%a%', '%\\%%', 'Ogc _eta%', '%', 'L_ma', 'Ogc delta\\_1%').map((s): Node => ({ text: q(s), json: s, sql: q(s) }));
      const instant = fc.constantFrom(mid as string, '2000-01-01T00:00:00Z', '2100-01-01T00:00:00.5Z');
      const timestampProperty = fc.constantFrom('created', 'modified');
      const polygon = fc.record({ a: fc.integer({ min: 0, max: 9 }), b: fc.integer({ min: 0, max: 9 }), c: fc.integer({ min: 1, max: 9 }) }).map(({ a, b, c }) => {
        const ring = [[x(a * 0.01), y(b * 0.01)], [x(a * 0.01 + c * 0.01), y(b * 0.01)], [x(a * 0.01 + c * 0.01), y(b * 0.01 + c * 0.01)], [x(a * 0.01), y(b * 0.01 + c * 0.01)], [x(a * 0.01), y(b * 0.01)]];
        const wkt = `POLYGON((${ring.map((p) => p.join(' ')).join(', ')}))`;
        return { text: wkt, json: { type: 'Polygon', coordinates: [ring] }, sql: `ST_GeomFromText('${wkt}', 4326)` };
      });
      const spot = fc.record({ a: fc.integer({ min: 0, max: 10 }), b: fc.integer({ min: 0, max: 10 }) }).map(({ a, b }) => {
        const wkt = `POINT(${x(a * 0.01)} ${y(b * 0.01)})`;
        return { text: wkt, json: { type: 'Point', coordinates: [x(a * 0.01), y(b * 0.01)] }, sql: `ST_GeomFromText('${wkt}', 4326)` };
      });
      const leaf: fc.Arbitrary<Node> = fc.oneof(
        fc.tuple(fc.oneof(stringProperty, caseiProperty), comparison, stringValue).map(([p, op, v]) => ({ text: `${p.text} ${op} ${v.text}`, json: { op, args: [p.json, v.json] }, sql: `(${p.sql} ${op} ${v.sql})` })),
        fc.tuple(stringProperty, fc.boolean(), pattern).map(([p, not, v]) => {
          const like: Node = { text: `${p.text} LIKE ${v.text}`, json: { op: 'like', args: [p.json, v.json] }, sql: `(${p.sql} LIKE ${v.sql})` };
          return not ? { text: `${p.text} NOT LIKE ${v.text}`, json: { op: 'not', args: [like.json] }, sql: `(NOT ${like.sql})` } : like;
        }),
        fc.tuple(stringProperty, stringValue, stringValue).map(([p, a, b]) => ({ text: `${p.text} BETWEEN ${a.text} AND ${b.text}`, json: { op: 'between', args: [p.json, a.json, b.json] }, sql: `(${p.sql} BETWEEN ${a.sql} AND ${b.sql})` })),
        fc.tuple(stringProperty, fc.array(stringValue, { minLength: 1, maxLength: 3 })).map(([p, list]) => ({
          text: `${p.text} IN (${list.map((v) => v.text).join(', ')})`,
          json: { op: 'in', args: [p.json, list.map((v) => v.json)] },
          sql: `(${p.sql} IN (${list.map((v) => v.sql).join(', ')}))`,
        })),
        fc.tuple(timestampProperty, comparison, instant).map(([p, op, v]) => ({ text: `${p} ${op} TIMESTAMP('${v}')`, json: { op, args: [{ property: p }, { timestamp: v }] }, sql: `(t.${p} ${op} '${v}'::timestamptz)` })),
        fc.boolean().map((b) => ({ text: `personal = ${b}`, json: { op: '=', args: [{ property: 'personal' }, b] }, sql: `(t.personal = ${b})` })),
        fc.constantFrom(owner.organizationId, stranger.organizationId).map((o) => ({ text: `organization = '${o}'`, json: { op: '=', args: [{ property: 'organization' }, o] }, sql: `(t.organization_id = '${o}')` })),
        stringProperty.map((p) => ({ text: `${p.text} IS NULL`, json: { op: 'isNull', args: [p.json] }, sql: `(${p.sql} IS NULL)` })),
        fc.tuple(fc.constantFrom(['S_INTERSECTS', 'ST_Intersects'], ['S_WITHIN', 'ST_Within'], ['S_DISJOINT', 'ST_Disjoint'], ['S_TOUCHES', 'ST_Touches']), polygon).map(([[fn, st], g]) => ({
          text: `${fn}(geometry, ${g.text})`,
          json: { op: fn.toLowerCase(), args: [{ property: 'geometry' }, g.json] },
          sql: `${st}(t.location, ${g.sql})`,
        })),
        fc.tuple(spot, fc.integer({ min: 0, max: 4000 })).map(([g, d]) => ({
          text: `S_DWITHIN(geometry, ${g.text}, ${d})`,
          json: { op: 's_dwithin', args: [{ property: 'geometry' }, g.json, d] },
          sql: `ST_DWithin(t.location::geography, ${g.sql}::geography, ${d}, false)`,
        })),
      );
      const { tree } = fc.letrec<{ tree: Node }>((tie) => ({
        tree: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          leaf,
          fc.tuple(fc.constantFrom('AND', 'OR'), tie('tree'), tie('tree')).map(([op, a, b]) => ({ text: `(${a.text}) ${op} (${b.text})`, json: { op: op.toLowerCase(), args: [a.json, b.json] }, sql: `(${a.sql} ${op} ${b.sql})` })),
          tie('tree').map((a) => ({ text: `NOT (${a.text})`, json: { op: 'not', args: [a.json] }, sql: `(NOT ${a.sql})` })),
        ),
      }));

      const expected = async (tenant: TestTenant, node: Node): Promise<string[]> => {
        const rows: { id: string }[] = await service.dataSource.query(
          `SELECT t.id::text AS id FROM twins t
            WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)
              AND t.location && ST_MakeEnvelope($2, $3, $4, $5, 4326) AND ${node.sql} ORDER BY t.id`,
          [tenant.organizationId, BOX.w, BOX.s, BOX.e, BOX.n],
        );
        return rows.map((row) => row.id);
      };
      let matched = 0;
      await fc.assert(
        fc.asyncProperty(tree, fc.constantFrom(owner, stranger), async (node, tenant) => {
          const want = await expected(tenant, node);
          if (want.length > 0) matched++;
          expect(await filtered(tenant, node.text)).toEqual(want);
          expect(await filtered(tenant, JSON.stringify(node.json), 'cql2-json')).toEqual(want);
        }),
        { numRuns: 80 },
      );
      // The property must not hold vacuously: most filters match some twins.
      expect(matched).toBeGreaterThan(20);
    }, 120_000);
  });

  /**
   * GDAL's OAPIF driver (Debian's gdal-bin, what QGIS uses underneath), run against the service on a port
   * with the token and organization as headers: it lists the layer, counts the visible located twins,
   * and exports them with a spatial filter and a -where, both of which reach the service (its access log
   * at debug level shows the request URLs).
   */
  describe('GDAL (ogrinfo, ogr2ogr)', () => {
    let gdal: TestApp;
    let base: string;
    let dir: string;
    let config: string[];

    beforeAll(async () => {
      gdal = await TestApp.start({ LOG_LEVEL: 'debug' });
      await gdal.app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(gdal.app.getHttpServer().address() as AddressInfo).port}/ogc`;
      dir = mkdtempSync(join(tmpdir(), 'ogc-gdal-'));
      // Two headers need a real carriage return and line feed between them.
      config = ['--config', 'GDAL_HTTP_HEADERS', `Authorization: Token ${owner.token}\r\nX-Organization: ${owner.organizationId}`, '--config', 'GDAL_HTTP_TIMEOUT', '60'];
    });
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true });
      await gdal?.close();
    });

    const requested = () =>
      gdal.logs
        .join('')
        .split('\n')
        .filter((line) => line.includes('"route":"/ogc/collections/twins/items"'))
        .map((line) => (JSON.parse(line) as { url: string }).url);

    it('ogrinfo lists the layer twins with the visible located twins as its features', async () => {
      const { stdout } = await run('ogrinfo', ['-ro', '-so', ...config, '-oo', 'PAGE_SIZE=1000', `OAPIF:${base}`, 'twins'], { timeout: 120_000 });
      const [{ n }] = await service.dataSource.query(`SELECT count(*)::int AS n FROM twins t WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)`, [owner.organizationId]);
      expect(stdout).toMatch(/^Layer name: twins$/m);
      expect(stdout).toMatch(/^Geometry: Point$/m);
      expect(stdout).toContain(`Feature Count: ${n}\n`);
    }, 180_000);

    it('ogr2ogr exports to GeoJSON with -spat and -where: the database\'s ids, the box and the filter pushed to the service', async () => {
      const out = join(dir, 'twins.geojson');
      const where = "name LIKE 'Ogc%'";
      await run('ogr2ogr', ['-f', 'GeoJSON', ...config, '-oo', 'PAGE_SIZE=1000', '-spat', String(BOX.w), String(BOX.s), String(BOX.e), String(BOX.n), '-where', where, out, `OAPIF:${base}`, 'twins'], { timeout: 120_000 });
      const exported = JSON.parse(readFileSync(out, 'utf8')) as { features: { properties: { id: string } }[] };
      const got = exported.features.map((f) => f.properties.id).sort();
      const rows: { id: string }[] = await service.dataSource.query(
        `SELECT t.id::text AS id FROM twins t WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)
            AND t.location && ST_MakeEnvelope($2, $3, $4, $5, 4326) AND t.name LIKE 'Ogc%' ORDER BY t.id`,
        [owner.organizationId, BOX.w, BOX.s, BOX.e, BOX.n],
      );
      expect(got).toEqual(rows.map((row) => row.id));
      expect(got.length).toBeGreaterThan(3);
      expect(got.every((id) => UUID.test(id))).toBe(true);
      // The service was asked for the box and the filter: neither was applied by GDAL alone.
      const asked = requested().filter((url) => url.includes('bbox='));
      expect(asked.length).toBeGreaterThan(0);
      const query = new URLSearchParams(asked[0].split('?')[1]);
      expect(query.get('bbox')!.split(',').map(Number)).toEqual([BOX.w, BOX.s, BOX.e, BOX.n].map((v) => expect.closeTo(v, 9)));
      expect(query.get('filter-lang')).toBe('cql-text');
      expect(query.get('filter')).toBe(where);
    }, 180_000);
  });
});
