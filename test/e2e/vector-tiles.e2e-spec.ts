import fc from 'fast-check';
import { gunzipSync } from 'node:zlib';
import { TileGridFold } from '../../src/maps/tile-grid-fold';
import { document, embeddedDatabase, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';
import { decodeTwinsLayer, tileOf } from '../support/vector-tiles';

const MVT = 'application/vnd.mapbox-vector-tile';
const point = (lon: number, lat: number) => ({ type: 'Point', coordinates: [lon, lat] });

/**
 * Vector tiles through the whole HTTP stack: the contract's shape (docs/MAPS.md), exact cluster counts
 * from both ways of counting (the grid the writes keep, zooms 0–12, and live), the visibility rule and
 * the filters, conditional requests, gzip, TileJSON. Each suite works in its own corner of the ocean so
 * the twins of other tests never fall in its tiles.
 */
describe('vector tiles', () => {
  let service: TestApp;
  let owner: TestTenant;
  let stranger: TestTenant;
  let crowd: TestTenant;
  // Just north-east of the middle of a zoom-16 tile in the South Pacific, away from every other test's
  // twins (and, drawn at random, from an earlier run's on the same database). The suite's twins lie
  // within 0.0002° of BASE, so at every zoom up to 16 they share a tile; their cells of the tile's grid:
  // - zooms ≤ 10: one cell (its middle is the tile's middle);
  // - zooms 11–14: the middle is a corner of cells: `theirsPrivate` in the one south-west of it, the
  //   others in the one north-east;
  // - zooms 15–16: each place a cell of its own (deeper, the places are in several tiles).
  const middle = tileOf(-150 + Math.random() * 20, -35 + Math.random() * 10, 16);
  const BASE = {
    lon: ((middle.x + 0.5) / 2 ** 16) * 360 - 180 + 0.00001,
    lat: (Math.atan(Math.sinh(Math.PI * (1 - (2 * (middle.y + 0.5)) / 2 ** 16))) * 180) / Math.PI + 0.00001,
  };
  const OFFSETS = { open: [0, 0], shop: [0.0002, 0], mine: [0, 0.0002], theirsPublic: [0.0002, 0.0002], theirsPrivate: [-0.0002, -0.0002] };
  const at = (key: keyof typeof OFFSETS) => point(BASE.lon + OFFSETS[key][0], BASE.lat + OFFSETS[key][1]);

  const create = (tenant: TestTenant, attributes: Record<string, unknown>) => service.createTwin(tenant, attributes);
  const tile = (tenant: TestTenant, z: number, x: number, y: number, query = '', headers: Record<string, string> = {}) =>
    service.inject({ method: 'GET', url: `/twins/tiles/${z}/${x}/${y}.mvt${query ? `?${query}` : ''}`, headers: { ...tenant.headers(), ...headers } });
  const featuresOf = async (tenant: TestTenant, z: number, x: number, y: number, query = '') => {
    const response = await tile(tenant, z, x, y, query);
    if (response.statusCode === 204) return [];
    if (response.statusCode !== 200) throw new Error(`tile ${z}/${x}/${y}: ${response.statusCode} ${response.body}`);
    expect(response.headers['content-type']).toBe(MVT);
    const layer = decodeTwinsLayer(response.rawPayload);
    expect(layer.extent).toBe(4096);
    return layer.features;
  };
  /** The suite's tile at zoom z. */
  const suiteTile = (z: number) => tileOf(BASE.lon, BASE.lat, z);
  const countIn = (features: { properties: Record<string, unknown> }[]) =>
    features.reduce((sum, f) => sum + (f.properties.cluster === true ? Number(f.properties.count) : 1), 0);
  /** The twins `tenant` sees in the suite's tile at zoom z, counted from the twins themselves (an earlier run's on a reused database included). */
  const visibleInSuiteTile = async (tenant: TestTenant, z: number) => {
    const { x, y } = suiteTile(z);
    const [{ n }] = await service.dataSource.query(
      `SELECT count(*)::int AS n FROM twins t WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)
          AND floor(tile_fraction_x(ST_X(t.location)) * 2 ^ $2)::int = $3 AND floor(tile_fraction_y(ST_Y(t.location)) * 2 ^ $2)::int = $4`,
      [tenant.organizationId, z, x, y],
    );
    return n as number;
  };

  const ids: Record<string, string> = {};

  beforeAll(async () => {
    service = await TestApp.start({ TILE_MAX_FEATURES: '4' });
    owner = await service.tenant({ organization: 'Tiles owner' });
    stranger = await service.tenant({ organization: 'Tiles stranger' });
    crowd = await service.tenant({ organization: 'Tiles crowd' });
    ids.open = await create(owner, { name: 'Open', public: true, location: at('open') });
    ids.shop = await create(owner, { name: 'Shop', location: at('shop'), personality: { services: ['tea'], characteristics: ['tea room', 'garden'] } });
    ids.mine = await create(owner, { name: 'Mine', location: at('mine') });
    ids.theirsPublic = await create(stranger, { name: 'Theirs public', public: true, location: at('theirsPublic') });
    ids.theirsPrivate = await create(stranger, { name: 'Theirs private', location: at('theirsPrivate') });
    // The crowd sees the three shared twins and three of its own: six, above TILE_MAX_FEATURES.
    for (const key of ['open', 'mine', 'theirsPrivate'] as const) await create(crowd, { name: `Crowd ${key}`, location: at(key) });
  });

  afterAll(async () => {
    await service.close();
  });

  const describeFeature = (f: { properties: Record<string, unknown> }) => (f.properties.cluster === true ? `cluster of ${f.properties.count}` : String(f.properties.name));
  /** Up to zoom 10, the features of the suite's one cell (an earlier run's twins may share its tile there); deeper, of its tile. */
  const suiteFeatures = async (tenant: TestTenant, z: number, query = '') => {
    const t = suiteTile(z);
    const features = await featuresOf(tenant, z, t.x, t.y, query);
    const cellOf = (pixel: number) => Math.floor(pixel / 64);
    return z > 10 ? features : features.filter((f) => cellOf(f.x) === cellOf(t.px) && cellOf(f.y) === cellOf(t.py));
  };
  const drawnAt = async (tenant: TestTenant, z: number, query = '') => (await suiteFeatures(tenant, z, query)).map(describeFeature).sort();

  it('draws a twin alone in its cell as its point, with id, name, public and supplier, at its place in the tile', async () => {
    const t = suiteTile(16);
    const features = await featuresOf(owner, 16, t.x, t.y);
    const byName = Object.fromEntries(features.map((f) => [f.properties.name, f]));
    expect(Object.keys(byName).sort()).toEqual(['Mine', 'Open', 'Shop', 'Theirs public']);
    expect(byName.Open.properties).toEqual({ id: ids.open, name: 'Open', public: true, supplier: false });
    expect(byName.Shop.properties).toEqual({ id: ids.shop, name: 'Shop', public: false, supplier: true });
    expect(byName.Mine.properties).toEqual({ id: ids.mine, name: 'Mine', public: false, supplier: false });
    expect([byName.Open.x, byName.Open.y]).toEqual([t.px, t.py]);
    // The stranger sees the shared twins and its own, not the owner's private one.
    const theirs = await featuresOf(stranger, 16, t.x, t.y);
    expect(theirs.map((f) => f.properties.name).sort()).toEqual(['Open', 'Shop', 'Theirs private', 'Theirs public']);
  });

  it('draws two or more twins of a cell as one cluster with their count, at every zoom, from the kept grid (zoom ≤ 12) and counted live (deeper)', async () => {
    // Each feature's properties: a cluster's count and flag, a lone twin's id, name, public and supplier.
    for (const z of [8, 10, 12, 13, 16, 17]) {
      for (const f of await featuresOf(crowd, z, suiteTile(z).x, suiteTile(z).y)) {
        expect(Object.keys(f.properties).sort()).toEqual(f.properties.cluster === true ? ['cluster', 'count'] : ['id', 'name', 'public', 'supplier']);
      }
    }
    // The owner sees four: Open, Shop, Mine, Theirs public.
    for (const z of [8, 10]) expect(await drawnAt(owner, z)).toEqual(['cluster of 4']);
    for (const z of [11, 12, 13, 14]) expect(await drawnAt(owner, z)).toEqual(['cluster of 4']);
    for (const z of [15, 16]) expect(await drawnAt(owner, z)).toEqual(['Mine', 'Open', 'Shop', 'Theirs public']);
    // The stranger: Open, Shop, Theirs public and, alone in its cell from zoom 11 on, Theirs private.
    expect(await drawnAt(stranger, 10)).toEqual(['cluster of 4']);
    for (const z of [11, 12, 13, 14]) expect(await drawnAt(stranger, z)).toEqual(['Theirs private', 'cluster of 3']);
    // The crowd: the three shared twins and three of its own, two of them where another twin it sees is.
    expect(await drawnAt(crowd, 10)).toEqual(['cluster of 6']);
    for (const z of [11, 12, 13, 14]) expect(await drawnAt(crowd, z)).toEqual(['Crowd theirsPrivate', 'cluster of 5']);
    for (const z of [15, 16]) expect(await drawnAt(crowd, z)).toEqual(['Crowd mine', 'Crowd theirsPrivate', 'Shop', 'Theirs public', 'cluster of 2']);
    // From zoom 17 every twin is its own point, unless the tile holds more than TILE_MAX_FEATURES (4 here):
    // the grid again. (Zoom 17's tile holds the places north-east of the middle: all but theirsPrivate.)
    expect(await drawnAt(owner, 17)).toEqual(['Mine', 'Open', 'Shop', 'Theirs public']);
    expect(await drawnAt(stranger, 17)).toEqual(['Open', 'Shop', 'Theirs public']);
    expect(await drawnAt(crowd, 17)).toEqual(['Crowd mine', 'Shop', 'Theirs public', 'cluster of 2']);
    // The lone twins of the kept grid are read whole: the stranger's private twin at zoom 12 as at 16.
    const lone = async (z: number) => (await featuresOf(stranger, z, suiteTile(z).x, suiteTile(z).y)).find((f) => f.properties.cluster !== true)!.properties;
    expect(await lone(12)).toEqual({ id: ids.theirsPrivate, name: 'Theirs private', public: false, supplier: false });
    expect(await lone(13)).toEqual(await lone(12));
  });

  it('reads the counts of zooms 0–12 from the kept grid and counts deeper tiles live (a change to the grid alone shows only down to 12)', async () => {
    // Proof of which way answers: one cell of the grid is altered behind the twins' back (and restored),
    // by a delta in a shard of its own (-1, no backend's), which the fold may fold like any other.
    const bump = (z: number, delta: number) =>
      service.dataSource.query(`INSERT INTO twin_tile_cells AS c (facet, organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y)
         SELECT facet, organization_id, public, supplier, zoom, x, y, cell, -1, $5::bigint, 0, 0 FROM twin_tile_cells
          WHERE facet = '' AND organization_id = $1::uuid AND zoom = $2::smallint AND x = $3::int AND y = $4::int
          GROUP BY facet, organization_id, public, supplier, zoom, x, y, cell HAVING sum(count) > 0
          ORDER BY cell, public, supplier LIMIT 1
         ON CONFLICT (facet, organization_id, zoom, x, y, cell, public, supplier, shard) DO UPDATE SET count = c.count + EXCLUDED.count`, [
        crowd.organizationId,
        z,
        suiteTile(z).x,
        suiteTile(z).y,
        delta,
      ]);
    try {
      for (const z of [8, 12]) await bump(z, 1000);
      for (const z of [8, 12, 13]) {
        const counted = countIn(await featuresOf(crowd, z, suiteTile(z).x, suiteTile(z).y));
        expect({ z, counted }).toEqual({ z, counted: (await visibleInSuiteTile(crowd, z)) + (z <= 12 ? 1000 : 0) });
      }
      // Filters the grid does not split by are counted live at every zoom.
      expect(countIn(await featuresOf(crowd, 8, suiteTile(8).x, suiteTile(8).y, 'is_personal=true'))).toBe(3);
    } finally {
      for (const z of [8, 12]) await bump(z, -1000);
    }
  });

  it('places a cluster at the centre of mass of its cell', async () => {
    // At zoom 8 the crowd's six twins share one cell of the 64 × 64 grid: its point is their mean position.
    const features = await suiteFeatures(crowd, 8);
    expect(features).toHaveLength(1);
    const fine = 4096 * 2 ** 20;
    const positions = (['open', 'shop', 'theirsPublic', 'open', 'mine', 'theirsPrivate'] as const).map((key) => tileOf(at(key).coordinates[0], at(key).coordinates[1], 8, fine));
    const mean = (key: 'px' | 'py') => positions.reduce((sum, p) => sum + p[key], 0) / positions.length / 2 ** 20;
    expect(Math.abs(features[0].x - mean('px'))).toBeLessThanOrEqual(1);
    expect(Math.abs(features[0].y - mean('py'))).toBeLessThanOrEqual(1);
  });

  it('applies the filters of GET /twins/, from the grid (is_public, is_supplier) and live (the others)', async () => {
    const t14 = suiteTile(14);
    const names = (query: string, z = 16) => drawnAt(owner, z, query);
    expect(await names('is_public=true')).toEqual(['Open', 'Theirs public']);
    expect(await names('is_supplier=true')).toEqual(['Shop']);
    expect(await names('is_public=false&is_supplier=false')).toEqual(['Mine']);
    expect(await names(`organization=${stranger.organizationId}`)).toEqual(['Theirs public']);
    expect(await names('is_personal=true')).toEqual(['Mine', 'Open', 'Shop']);
    // At zoom 8, in one cell, where the grid answers the first three and live counting the last.
    expect(await names('is_public=true', 8)).toEqual(['cluster of 2']);
    expect(await names('is_public=false', 8)).toEqual(['cluster of 2']);
    expect(await names('is_public=false&is_supplier=false', 8)).toEqual(['Mine']);
    expect(await names('is_personal=true', 8)).toEqual(['cluster of 3']);
    // Each filter, its complement and the grid's classes, wherever they are counted: the grid's facets
    // (zoom ≤ 6), the grid less the few twins left out (zoom ≤ 12), live (deeper); a lone twin named.
    for (const z of [4, 6, 8, 12, 14]) {
      expect({ z, names: await names(`organization=${stranger.organizationId}`, z) }).toEqual({ z, names: ['Theirs public'] });
      expect({ z, names: await names('characteristics=garden', z) }).toEqual({ z, names: ['Shop'] });
      expect({ z, names: await names('characteristics=garden,tea room', z) }).toEqual({ z, names: ['Shop'] });
      expect({ z, names: await names('is_personal=false', z) }).toEqual({ z, names: ['Theirs public'] });
      expect({ z, names: await names('is_personal=false&is_public=false', z) }).toEqual({ z, names: [] });
      expect({ z, names: await names(`organization=${owner.organizationId}&is_supplier=false`, z) }).toEqual({ z, names: ['cluster of 2'] });
    }
    expectError(await tile(owner, 14, t14.x, t14.y, 'is_connection=true'), 400, { header: 'X-Twin' });
    expectError(await tile(owner, 14, t14.x, t14.y, 'is_public=maybe'), 400, { parameter: 'is_public' });
    expectError(await tile(owner, 14, t14.x, t14.y, 'page_size=10'), 400, { parameter: 'page_size' });
  });

  it('answers 204 for a tile without twins', async () => {
    const response = await tile(owner, 10, 0, 0);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
  });

  it('refuses a z, x or y outside the pyramid with a 400 naming it', async () => {
    expectError(await tile(owner, 23, 0, 0), 400, { parameter: 'z' });
    expectError(await tile(owner, 2, 4, 0), 400, { parameter: 'x' });
    expectError(await tile(owner, 2, 0, 4), 400, { parameter: 'y' });
    for (const [z, x, y, name] of [['a', '0', '0', 'z'], ['1', '-1', '0', 'x'], ['1', '0', '1.5', 'y'], ['1', '0x1', '0', 'x'], ['99999999999', '0', '0', 'z']]) {
      expectError(await service.inject({ method: 'GET', url: `/twins/tiles/${z}/${x}/${y}.mvt`, headers: owner.headers() }), 400, { parameter: name });
    }
  });

  it('needs the token and organization headers like GET /twins/', async () => {
    const response = await service.inject({ method: 'GET', url: '/twins/tiles/0/0/0.mvt' });
    expectError(response, 401);
  });

  it('tags each tile with an ETag, answers If-None-Match with a 304, and changes the tag when a twin in the tile changes', async () => {
    const t = suiteTile(16);
    const first = await tile(owner, 16, t.x, t.y);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    // The caller's own, revalidated on every use: another organization sees other twins at the same URL.
    expect(first.headers['cache-control']).toBe('private, no-cache');
    expect(first.headers.vary).toBe('Authorization, X-Organization, X-Twin, Accept-Encoding');
    const again = await tile(owner, 16, t.x, t.y, '', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const renamed = await service.inject({
      method: 'PATCH',
      url: `/my/twins/${ids.mine}/`,
      headers: { ...owner.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', id: ids.mine, attributes: { name: 'Mine, renamed' } }),
    });
    expect(renamed.statusCode).toBe(200);
    const changed = await tile(owner, 16, t.x, t.y, '', { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(decodeTwinsLayer(changed.rawPayload).features.map((f) => f.properties.name)).toContain('Mine, renamed');
  });

  it('gzips a tile for Accept-Encoding: gzip, decoding to the same tile', async () => {
    const t14 = suiteTile(14);
    const plain = await tile(owner, 14, t14.x, t14.y);
    // A tile of four points is small: below the compression threshold it goes as it is.
    expect(plain.rawPayload.length).toBeLessThan(1024);
    const many = await service.tenant({ organization: 'Tiles gzip' });
    const big = await TestApp.start({ TILE_MAX_FEATURES: '4096' });
    try {
      // 300 twins a cell apart (cells of 0.0055° at zoom 10): 300 points.
      const t = tileOf(-150.4, -20.4, 10);
      const west = (t.x / 1024) * 360 - 180;
      const north = (Math.atan(Math.sinh(Math.PI * (1 - (2 * t.y) / 1024))) * 180) / Math.PI;
      await big.dataSource.query(
        `INSERT INTO twins (organization_id, name, location)
         SELECT $1, 'Dense ' || i, ST_SetSRID(ST_MakePoint($2 + 0.003 + (i % 30) * 0.006, $3 - 0.003 - (i / 30) * 0.006), 4326) FROM generate_series(0, 299) i`,
        [many.organizationId, west, north],
      );
      const raw = await big.inject({ method: 'GET', url: `/twins/tiles/10/${t.x}/${t.y}.mvt`, headers: many.headers() });
      const zipped = await big.inject({ method: 'GET', url: `/twins/tiles/10/${t.x}/${t.y}.mvt`, headers: { ...many.headers(), 'accept-encoding': 'gzip' } });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers['content-type']).toBe(MVT);
      expect(String(zipped.headers.vary)).toMatch(/Accept-Encoding/);
      const unzipped = gunzipSync(zipped.rawPayload);
      expect(unzipped.equals(raw.rawPayload)).toBe(true);
      expect(decodeTwinsLayer(unzipped).features).toHaveLength(300);
    } finally {
      await big.close();
    }
  });

  it('serves TileJSON 3.0.0 whose tile URL keeps the filters and whose bounds hold the twins shown', async () => {
    const response = await service.inject({ method: 'GET', url: '/twins/tiles.json?is_public=true&characteristics=a,b', headers: { ...owner.headers(), host: 'maps.example' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const tileJson = response.json();
    expect(tileJson).toMatchObject({
      tilejson: '3.0.0',
      tiles: ['http://maps.example/twins/tiles/{z}/{x}/{y}.mvt?is_public=true&characteristics=a,b'],
      minzoom: 0,
      maxzoom: 22,
      vector_layers: [{ id: 'twins', fields: { id: 'String', name: 'String', public: 'Boolean', supplier: 'Boolean', count: 'Number', cluster: 'Boolean' } }],
    });
    // Only this organization's located public twins and the shared ones: the grid's cells hold them all.
    const own = await service.tenant({ organization: 'Tiles bounds' });
    await create(own, { name: 'West', location: point(-100.25, 10.5) });
    await create(own, { name: 'East', location: point(-99.5, 11.25) });
    const bounds = (await service.inject({ method: 'GET', url: '/twins/tiles.json?is_personal=true', headers: own.headers() })).json();
    expect(bounds.bounds[0]).toBeCloseTo(-100.25, 6);
    expect(bounds.bounds[1]).toBeCloseTo(10.5, 6);
    expect(bounds.bounds[2]).toBeCloseTo(-99.5, 6);
    expect(bounds.bounds[3]).toBeCloseTo(11.25, 6);
    expect(bounds.center[2]).toBeGreaterThanOrEqual(7);
    const none = (await service.inject({ method: 'GET', url: '/twins/tiles.json?is_personal=true&is_public=true', headers: own.headers() })).json();
    expect(none.bounds).toEqual([-180, -85.0511287798066, 180, 85.0511287798066]);
  });

  it('counts every visible twin of a tile exactly, whatever the zoom, the place, the filter and the way of counting (fast-check)', async () => {
    // Twins scattered over a small area near a tile corner, some public, some the caller's own, with
    // characteristics a and b; clusters and points at every zoom (TILE_MAX_FEATURES 3 from zoom 17).
    const area = await service.tenant({ organization: 'Tiles exact' });
    const CORNER = { lon: -135, lat: -40.979898069620134 }; // the corner of tiles at every zoom up to 9 or so
    const place = fc.record({
      dx: fc.double({ min: -0.05, max: 0.05, noNaN: true }),
      dy: fc.double({ min: -0.05, max: 0.05, noNaN: true }),
      shared: fc.boolean(),
      personal: fc.boolean(),
      characteristics: fc.subarray(['a', 'b']),
    });
    // Each filter and the condition on the twins it stands for ($1 the organization, $2 the account).
    const FILTERS: [string, string][] = [
      ['', 'true'],
      ['is_public=true', 't.public'],
      [`organization=${area.organizationId}`, 't.organization_id = $1'],
      ['is_personal=true', 't.owner_account_id = $2'],
      ['is_personal=false', 't.owner_account_id IS DISTINCT FROM $2'],
      ['characteristics=a', `t.characteristics @> '{a}'`],
      ['characteristics=a,b', `t.characteristics @> '{a,b}'`],
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(place, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 18 }), async (places, z) => {
        await service.dataSource.query(`DELETE FROM twins WHERE organization_id = $1`, [area.organizationId]);
        await service.dataSource.query(
          `INSERT INTO twins (organization_id, name, public, owner_account_id, characteristics, location)
           SELECT $1, 'P', p.shared, CASE WHEN p.personal THEN $4::uuid END, ARRAY(SELECT jsonb_array_elements_text(p.characteristics)),
                  ST_SetSRID(ST_MakePoint($2 + p.dx, $3 + p.dy), 4326)
             FROM jsonb_to_recordset($5::jsonb) AS p(dx float8, dy float8, shared boolean, personal boolean, characteristics jsonb)`,
          [area.organizationId, CORNER.lon, CORNER.lat, area.accountId, JSON.stringify(places)],
        );
        // The tiles the places fall in, and every twin the tenant sees there per filter (other suites'
        // shared twins included), counted by PostgreSQL from the twins themselves.
        const tiles: { x: number; y: number }[] = await service.dataSource.query(
          `SELECT DISTINCT floor(tile_fraction_x(ST_X(location)) * 2 ^ $2)::int AS x, floor(tile_fraction_y(ST_Y(location)) * 2 ^ $2)::int AS y FROM twins WHERE organization_id = $1`,
          [area.organizationId, z],
        );
        for (const { x, y } of tiles) {
          for (const [query, condition] of FILTERS) {
            const [{ n }] = await service.dataSource.query(
              `SELECT count(*)::int AS n FROM twins t
                WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1) AND $2::uuid IS NOT NULL AND ${condition}
                  AND floor(tile_fraction_x(ST_X(t.location)) * 2 ^ $3)::int = $4 AND floor(tile_fraction_y(ST_Y(t.location)) * 2 ^ $3)::int = $5`,
              [area.organizationId, area.accountId, z, x, y],
            );
            const features = await featuresOf(area, z, x, y, query);
            expect({ z, query, counted: countIn(features) }).toEqual({ z, query, counted: n });
            // A point is a twin of the tile that the filter keeps.
            for (const f of features.filter((feature) => feature.properties.cluster !== true)) {
              const [{ kept }] = await service.dataSource.query(`SELECT count(*)::int AS kept FROM twins t WHERE t.id = $3 AND $1::uuid IS NOT NULL AND $2::uuid IS NOT NULL AND ${condition}`, [area.organizationId, area.accountId, f.properties.id]);
              expect({ z, query, point: f.properties.id, kept }).toEqual({ z, query, point: f.properties.id, kept: 1 });
            }
          }
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe('the kept cluster grid (twin_tile_cells)', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let fold: TileGridFold;

  beforeAll(async () => {
    service = await TestApp.start({ TILE_MAX_FEATURES: '2' });
    tenant = await service.tenant({ organization: 'Grid' });
    fold = service.app.get(TileGridFold);
  });
  afterAll(async () => {
    await service.close();
  });

  /**
   * The grid built from scratch from the twins, as the migration first builds it, minus what is kept
   * summed over shards (a cell whose shards sum to 0 is no cell): no row may differ.
   */
  const differences = async () =>
    service.dataSource.query(`
      WITH rebuilt AS (
        SELECT r.facet, r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell, sum(r.count)::bigint AS count, sum(r.sum_x) AS sum_x, sum(r.sum_y) AS sum_y,
               sum(r.id_high) AS id_high, sum(r.id_low) AS id_low
          FROM twins t,
               LATERAL twin_tile_cells_of(t.id, t.organization_id, t.public, cardinality(t.services) > 0, ST_X(t.location), ST_Y(t.location), 1, t.owner_account_id, to_jsonb(t.characteristics)) r
         WHERE t.location IS NOT NULL
         GROUP BY r.facet, r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell),
      kept AS (
        SELECT facet, organization_id, public, supplier, zoom, x, y, cell, sum(count)::bigint AS count, sum(sum_x) AS sum_x, sum(sum_y) AS sum_y,
               sum(id_high) AS id_high, sum(id_low) AS id_low
          FROM twin_tile_cells GROUP BY facet, organization_id, public, supplier, zoom, x, y, cell HAVING sum(count) <> 0)
      SELECT coalesce(r.organization_id, c.organization_id) AS organization_id, coalesce(r.zoom, c.zoom) AS zoom, r.count AS rebuilt, c.count AS kept
        FROM rebuilt r FULL JOIN kept c USING (facet, organization_id, public, supplier, zoom, x, y, cell)
       WHERE r.count IS DISTINCT FROM c.count OR abs(r.sum_x - c.sum_x) > 1e-9 OR abs(r.sum_y - c.sum_y) > 1e-9
          OR r.id_high IS DISTINCT FROM c.id_high OR r.id_low IS DISTINCT FROM c.id_low
       LIMIT 5`);

  it('stays equal to the grid built from scratch, facets included, through inserts, moves, visibility, organization, owner and characteristics changes, deletes and folds (fast-check)', async () => {
    const other = await service.tenant({ organization: 'Grid other' });
    const step = fc.oneof(
      fc.record({ kind: fc.constant('insert' as const), n: fc.integer({ min: 1, max: 5 }), lon: fc.double({ min: -179.9, max: 179.9, noNaN: true }), lat: fc.double({ min: -89, max: 89, noNaN: true }) }),
      fc.record({ kind: fc.constant('move' as const), lon: fc.double({ min: -180, max: 180, noNaN: true }), lat: fc.double({ min: -85, max: 85, noNaN: true }) }),
      fc.record({ kind: fc.constant('unlocate' as const) }),
      fc.record({ kind: fc.constant('share' as const), public: fc.boolean(), services: fc.boolean() }),
      fc.record({ kind: fc.constant('hand over' as const) }),
      fc.record({ kind: fc.constant('own' as const), mine: fc.boolean() }),
      fc.record({ kind: fc.constant('characterise' as const), characteristics: fc.subarray(['a', 'b', 'c']) }),
      fc.record({ kind: fc.constant('rename' as const) }),
      fc.record({ kind: fc.constant('delete' as const) }),
      // A part of the writers' shards folded (besides the fold's own rounds, every second).
      fc.record({ kind: fc.constant('fold' as const), batch: fc.integer({ min: 1, max: 40 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const scope = [tenant.organizationId, other.organizationId];
        // The twin each step changes: the oldest of the two organizations' twins (a statement may touch many).
        const first = `(SELECT id FROM twins WHERE organization_id = ANY ($1::uuid[]) ORDER BY created, id LIMIT 2)`;
        for (const s of steps) {
          if (s.kind === 'insert') {
            await service.dataSource.query(
              `INSERT INTO twins (organization_id, name, location) SELECT $1, 'G', ST_SetSRID(ST_MakePoint($2 + i * 0.0001, $3), 4326) FROM generate_series(1, $4) i`,
              [tenant.organizationId, s.lon, s.lat, s.n],
            );
          } else if (s.kind === 'move') {
            await service.dataSource.query(`UPDATE twins SET location = ST_SetSRID(ST_MakePoint($2, $3), 4326) WHERE id IN ${first}`, [scope, s.lon, s.lat]);
          } else if (s.kind === 'unlocate') {
            await service.dataSource.query(`UPDATE twins SET location = NULL WHERE id IN ${first}`, [scope]);
          } else if (s.kind === 'share') {
            await service.dataSource.query(`UPDATE twins SET public = $2, services = CASE WHEN $3 THEN '{tea}'::text[] ELSE '{}' END WHERE id IN ${first}`, [scope, s.public, s.services]);
          } else if (s.kind === 'hand over') {
            await service.dataSource.query(`UPDATE twins SET organization_id = $2 WHERE id IN ${first}`, [scope, other.organizationId]);
          } else if (s.kind === 'own') {
            await service.dataSource.query(`UPDATE twins SET owner_account_id = CASE WHEN $2 THEN $3::uuid END WHERE id IN ${first}`, [scope, s.mine, tenant.accountId]);
          } else if (s.kind === 'characterise') {
            await service.dataSource.query(`UPDATE twins SET characteristics = $2::text[] WHERE id IN ${first}`, [scope, s.characteristics]);
          } else if (s.kind === 'rename') {
            await service.dataSource.query(`UPDATE twins SET name = name || '!' WHERE id IN ${first}`, [scope]);
          } else if (s.kind === 'fold') {
            await fold.foldBatch(s.batch);
          } else {
            await service.dataSource.query(`DELETE FROM twins WHERE id IN ${first}`, [scope]);
          }
        }
        expect(await differences()).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });

  it('lets a twin move while a transaction that moved another twin of its organization in the same cells is still open (PostgreSQL)', async () => {
    // The embedded database has one connection: it runs one transaction at a time anyway.
    if (embeddedDatabase()) return;
    const movers = await service.tenant({ organization: 'Grid movers' });
    const [a, b] = (
      await service.dataSource.query(`INSERT INTO twins (organization_id, name, location) SELECT $1, 'Mover ' || i, ST_SetSRID(ST_MakePoint(12.49, 41.89), 4326) FROM generate_series(1, 2) i RETURNING id`, [
        movers.organizationId,
      ])
    ).map((row: { id: string }) => row.id);
    const move = `UPDATE twins SET location = ST_SetSRID(ST_MakePoint(12.51, 41.91), 4326), modified = now() WHERE id = $1`;
    const held = service.dataSource.createQueryRunner();
    const other = service.dataSource.createQueryRunner();
    try {
      await held.startTransaction();
      await held.query(move, [a]);
      // Before the shards, this waited for `held` on every shared cell of zooms 0–12 (and failed here).
      await other.query(`SET lock_timeout = '2s'`);
      await other.query(move, [b]);
      await held.commitTransaction();
    } finally {
      if (held.isTransactionActive) await held.rollbackTransaction();
      await other.query(`RESET lock_timeout`);
      await held.release();
      await other.release();
    }
    const moved: { n: number }[] = await service.dataSource.query(`SELECT count(*)::int AS n FROM twins WHERE id = ANY ($1) AND ST_X(location) = 12.51`, [[a, b]]);
    expect(moved[0].n).toBe(2);
    expect(await differences()).toEqual([]);
  });

  it('answers exact tiles and bounds from unfolded, partly folded and folded deltas', async () => {
    // Folded only when this test says so from here on.
    await fold.stop();
    const reader = await service.tenant({ organization: 'Grid reader' });
    const count = (features: { properties: Record<string, unknown> }[]) =>
      features.reduce((sum, f) => sum + (f.properties.cluster === true ? Number(f.properties.count) : 1), 0);
    // Its own corner of the ocean, drawn at random (a reused database keeps earlier runs' twins).
    const base = { lon: -175 + Math.random() * 10, lat: -55 + Math.random() * 5 };
    const fractions = `tile_fraction_x(ST_X(t.location)) AS fx, tile_fraction_y(ST_Y(t.location)) AS fy`;
    /** Every tile at these zooms holding one of the reader's twins: what a tile answers against the twins it sees, counted live. */
    const checkTiles = async (label: string) => {
      const tiles: { z: number; x: number; y: number; visible: number }[] = await service.dataSource.query(
        `WITH tiles AS (SELECT DISTINCT z, floor(f.fx * 2 ^ z)::int AS x, floor(f.fy * 2 ^ z)::int AS y
                          FROM twins t, LATERAL (SELECT ${fractions}) f, unnest('{0,3,6,8,10,12}'::int[]) z WHERE t.organization_id = $1 AND t.location IS NOT NULL)
         SELECT k.z, k.x, k.y, (SELECT count(*)::int FROM twins t, LATERAL (SELECT ${fractions}) f
                                 WHERE t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)
                                   AND floor(f.fx * 2 ^ k.z)::int = k.x AND floor(f.fy * 2 ^ k.z)::int = k.y) AS visible
           FROM tiles k`,
        [reader.organizationId],
      );
      for (const { z, x, y, visible } of tiles) {
        const response = await service.inject({ method: 'GET', url: `/twins/tiles/${z}/${x}/${y}.mvt`, headers: reader.headers() });
        const counted = response.statusCode === 204 ? 0 : count(decodeTwinsLayer(response.rawPayload).features);
        expect({ label, z, x, y, counted }).toEqual({ label, z, x, y, counted: visible });
      }
      // The bounds of its own private twins come from the grid (zoom 8's cells, outward): the live ones'.
      const [live]: { west: number; north: number; east: number; south: number }[] = await service.dataSource.query(
        `SELECT min(floor(f.fx * 16384)) / 16384 AS west, min(floor(f.fy * 16384)) / 16384 AS north,
                (max(floor(f.fx * 16384)) + 1) / 16384 AS east, (max(floor(f.fy * 16384)) + 1) / 16384 AS south
           FROM twins t, LATERAL (SELECT ${fractions}) f
          WHERE t.organization_id = $1 AND t.location IS NOT NULL AND NOT t.public AND cardinality(t.services) = 0`,
        [reader.organizationId],
      );
      const lon = (fx: number) => fx * 360 - 180;
      const lat = (fy: number) => (Math.atan(Math.sinh(Math.PI * (1 - 2 * fy))) * 180) / Math.PI;
      const bounds = (await service.inject({ method: 'GET', url: '/twins/tiles.json?is_public=false&is_supplier=false', headers: reader.headers() })).json().bounds;
      [lon(live.west), lat(live.south), lon(live.east), lat(live.north)].forEach((value, i) => expect({ label, i, bound: bounds[i] as number }).toEqual({ label, i, bound: expect.closeTo(value, 6) }));
    };
    const unfolded = async () => (await service.dataSource.query(`SELECT count(*)::int AS n FROM twin_tile_cells WHERE shard <> 0`))[0].n as number;

    await service.dataSource.query(
      `INSERT INTO twins (organization_id, name, public, location)
       SELECT $1, 'Reader ' || i, i % 4 = 0, ST_SetSRID(ST_MakePoint($2 + (i % 5) * 0.01, $3 + (i / 5) * 0.01), 4326) FROM generate_series(0, 24) i`,
      [reader.organizationId, base.lon, base.lat],
    );
    await fold.foldAll();
    expect(await unfolded()).toBe(0);
    await checkTiles('folded');
    // The westernmost twins leave for the east (their cells' folded counts are now cancelled by the
    // shard's negative ones), some go, some come: all unfolded.
    await service.dataSource.query(`UPDATE twins SET location = ST_SetSRID(ST_MakePoint(ST_X(location) + 0.5, ST_Y(location) + 0.1), 4326) WHERE organization_id = $1 AND ST_X(location) < $2`, [
      reader.organizationId,
      base.lon + 0.035,
    ]);
    await service.dataSource.query(`DELETE FROM twins WHERE organization_id = $1 AND name IN ('Reader 9', 'Reader 14')`, [reader.organizationId]);
    await service.dataSource.query(`INSERT INTO twins (organization_id, name, location) SELECT $1, 'Newcomer', ST_SetSRID(ST_MakePoint($2 + 0.04, $3 + 0.3), 4326)`, [reader.organizationId, base.lon, base.lat]);
    expect(await unfolded()).toBeGreaterThan(0);
    await checkTiles('unfolded');
    // Partly folded: a few rows at a time.
    await fold.foldBatch(5);
    await checkTiles('a batch of 5 folded');
    if (!embeddedDatabase()) {
      // And with rows a transaction holds (a running writer's), which the fold leaves.
      const holder = service.dataSource.createQueryRunner();
      try {
        await holder.startTransaction();
        await holder.query(`SELECT 1 FROM twin_tile_cells WHERE shard <> 0 AND organization_id = $1 FOR UPDATE`, [reader.organizationId]);
        await fold.foldAll();
        expect(await unfolded()).toBeGreaterThan(0);
        await checkTiles('held rows unfolded, the others folded');
      } finally {
        await holder.rollbackTransaction();
        await holder.release();
      }
    }
    await fold.foldAll();
    expect(await unfolded()).toBe(0);
    await checkTiles('folded again');
  });

  it('keeps each cell\'s sums through folds in any order: a move within a cell folded before the twin\'s arrival there', async () => {
    await fold.stop();
    await fold.foldAll();
    const { organizationId } = await service.tenant({ organization: 'Grid order' });
    // Deltas as two writers' shards hold them (below every backend's, so a pass takes them first, in this order).
    const delta = (shard: number, count: number, sumX: number) =>
      service.dataSource.query(
        `INSERT INTO twin_tile_cells (organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y) VALUES ($1, false, false, 12, 7, 7, 7, $2, $3, $4, $5)`,
        [organizationId, shard, count, sumX, count * 0.5],
      );
    await delta(-1000, 0, 0.25e-6);
    await delta(-999, 1, 0.1);
    const cell = async () =>
      (await service.dataSource.query(`SELECT sum(count)::int AS count, sum(sum_x) AS sum_x, sum(sum_y) AS sum_y, count(*)::int AS rows FROM twin_tile_cells WHERE organization_id = $1`, [organizationId]))[0];
    for (let batch = 0; batch < 2; batch++) {
      await fold.foldBatch(1);
      const { count, sum_x, sum_y } = await cell();
      expect({ batch, count, sum_x: Math.round(sum_x * 1e12), sum_y }).toEqual({ batch, count: 1, sum_x: Math.round((0.1 + 0.25e-6) * 1e12), sum_y: 0.5 });
    }
    expect((await cell()).rows).toBe(1);
    // No twin stands behind these counts: out of the grid again.
    await service.dataSource.query(`DELETE FROM twin_tile_cells WHERE organization_id = $1`, [organizationId]);
  });

  it('leaves, once folded with nothing running, only shard 0 and no cell at zero', async () => {
    await fold.stop();
    await fold.foldAll();
    expect(await service.dataSource.query(`SELECT shard, count FROM twin_tile_cells WHERE shard <> 0 OR count <= 0 LIMIT 5`)).toEqual([]);
    expect(await differences()).toEqual([]);
  });

  it('keeps nothing for twins outside Web Mercator, and puts longitude 180 in the easternmost tile', async () => {
    const rows = await service.dataSource.query(
      `SELECT count(*)::int AS n FROM twin_tile_cells_of(gen_random_uuid(), $1, false, false, 10, 86, 1, NULL, '["a"]')
       UNION ALL SELECT x FROM twin_tile_cells_of(gen_random_uuid(), $1, false, false, 180, 0, 1, NULL, '["a"]') WHERE zoom = 3`,
      [tenant.organizationId],
    );
    expect(rows.map((r: { n: number }) => r.n)).toEqual([0, 7]);
  });
});
