import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { SseClient } from '../support/sse-client';
import { document, embeddedDatabase, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';
import { ATOMIC_MEDIA_TYPE } from '../../src/operations/atomic-document';
import { PositionPartitions } from '../../src/twins/positions/position-partitions';

/**
 * Positions and tracks (docs/API.md, "Positions and tracks"): uploads all or nothing, duplicates stored
 * once, late positions into the track only, the twin at its newest position, `twin.moved` once per upload,
 * tracks as GeoJSON pages, and the partitions that hold them.
 */

const MINUTE = 60_000;
/** An instant `minutes` from now, as ISO 8601 with microseconds (what the service answers). */
const at = (minutes: number, micros = 0): string => new Date(Math.floor(Date.now() / MINUTE) * MINUTE + minutes * MINUTE).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);

type Attributes = Record<string, unknown>;
const position = (coordinates: [number, number], occurred: string, more: Attributes = {}): Attributes => ({ type: 'positions', attributes: { coordinates, occurred, ...more } });

describe('positions: uploads, moves and tracks', () => {
  let service: TestApp;
  let alpha: TestTenant;
  let beta: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '100' });
    await service.app.listen(0, '127.0.0.1');
    alpha = await service.tenant({ organization: 'Fleet alpha', twin: 'Van' });
    beta = await service.tenant({ organization: 'Fleet beta', twin: 'Truck' });
  });
  afterAll(() => service.close());

  const upload = (tenant: TestTenant, twinId: string, data: unknown, raw?: string) =>
    service.inject({ method: 'POST', url: `/twins/${twinId}/positions`, headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: raw ?? JSON.stringify({ data }) });
  const track = (tenant: TestTenant, twinId: string, query = '') => service.inject({ method: 'GET', url: `/twins/${twinId}/track${query}`, headers: tenant.headers() });
  const detail = async (tenant: TestTenant, twinId: string) => (await service.inject({ method: 'GET', url: `/twins/${twinId}/`, headers: tenant.headers() })).json().data;
  const newTwin = (tenant: TestTenant, attributes: Attributes = {}) => service.createTwin(tenant, { name: 'Courier', ...attributes });
  type Moved = { attributes: { coordinates: number[]; occurred: string } };
  const moves = async (twinId: string): Promise<Moved[]> =>
    (await service.dataSource.query(`SELECT resource FROM changes WHERE twin_id = $1 AND kind = 'twin.moved' ORDER BY position`, [twinId])).map((row: { resource: string }) => JSON.parse(row.resource));

  it('stores an upload, moves the twin to its newest position, and answers what was new', async () => {
    const twin = await newTwin(alpha);
    const response = await upload(alpha, twin, [
      position([2.35, 48.85], at(-3), { accuracy: 4.5, speed: 1.25, heading: 359.5, altitude: -12.75 }),
      position([2.36, 48.86], at(-1, 250)),
      position([2.34, 48.84], at(-2)),
    ]);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
    expect(response.json()).toEqual({ meta: { received: 3, new: 3 } });
    expect((await detail(alpha, twin)).attributes.location).toEqual({ type: 'Point', coordinates: [2.36, 48.86] });

    const body = (await track(alpha, twin)).json();
    expect(body.features.map((f: { properties: { occurred: string } }) => f.properties.occurred)).toEqual([at(-3), at(-2), at(-1, 250)]);
    expect(body.features[0]).toEqual({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [2.35, 48.85] },
      properties: { occurred: at(-3), accuracy: 4.5, speed: 1.25, heading: 359.5, altitude: -12.75 },
    });
  });

  it('answers every number as sent, to the last digit', async () => {
    const twin = await newTwin(alpha);
    const coordinates: [number, number] = [0.1 + 0.2, 1 / 3];
    const measures = { accuracy: 1e-7, speed: 123456.789012345, heading: 359.99999999999994, altitude: -0.0125 };
    await upload(alpha, twin, [position(coordinates, at(-1), measures)]);
    for (const query of ['', '?format=line']) {
      const [feature] = (await track(alpha, twin, query)).json().features;
      expect(feature.geometry.coordinates).toEqual(coordinates);
    }
    const [point] = (await track(alpha, twin)).json().features;
    expect(point.properties).toEqual({ occurred: at(-1), ...measures });
    expect((await moves(twin))[0]).toEqual(expect.objectContaining({ attributes: expect.objectContaining({ coordinates, ...measures }) }));
  });

  it('answers occurred in UTC with six fraction digits, whatever offset was sent', async () => {
    const twin = await newTwin(alpha);
    const sent = new Date(Date.now() - 5 * MINUTE);
    const local = `${new Date(sent.getTime() + 2 * 3600_000).toISOString().slice(0, 19)}.123456+02:00`;
    expect((await upload(alpha, twin, [position([10, 50], local)])).statusCode).toBe(200);
    const [feature] = (await track(alpha, twin)).json().features;
    expect(feature.properties.occurred).toBe(`${sent.toISOString().slice(0, 19)}.123456Z`);
  });

  it('stores a retried upload once, and a late position into the track only', async () => {
    const twin = await newTwin(alpha);
    const batch = [position([1, 1], at(-10)), position([1.1, 1.1], at(-5))];
    expect((await upload(alpha, twin, batch)).json()).toEqual({ meta: { received: 2, new: 2 } });
    expect((await upload(alpha, twin, batch)).json()).toEqual({ meta: { received: 2, new: 0 } });
    // The same position twice in one upload is one position.
    expect((await upload(alpha, twin, [position([1.2, 1.2], at(-4)), position([1.2, 1.2], at(-4))])).json()).toEqual({ meta: { received: 2, new: 1 } });
    expect((await upload(alpha, twin, [position([9, 9], at(-20))])).json()).toEqual({ meta: { received: 1, new: 1 } });
    expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual([1.2, 1.2]);
    expect((await track(alpha, twin)).json().features.map((f: { geometry: { coordinates: number[] } }) => f.geometry.coordinates)).toEqual([
      [9, 9],
      [1, 1],
      [1.1, 1.1],
      [1.2, 1.2],
    ]);
    // One twin.moved per upload that moved the twin: the first and the third, not the retry nor the late one.
    expect((await moves(twin)).map((move) => move.attributes.coordinates)).toEqual([
      [1.1, 1.1],
      [1.2, 1.2],
    ]);
  });

  it('refuses an upload with a bad position whole, naming every problem', async () => {
    const twin = await newTwin(alpha);
    const response = await upload(alpha, twin, [
      position([2, 48], at(-1)),
      position([200, 48], at(-1, 1)),
      { type: 'positions', attributes: { coordinates: [2, 48] } },
      position([2, -91], 'yesterday', { speed: -1, colour: 'red' }),
      position([2, 48], at(-1, 2), { heading: 360 }),
    ]);
    expectError(response, 400);
    const errors = response.json().errors as { source: { pointer: string } }[];
    expect(errors.map((error) => error.source.pointer).sort()).toEqual(
      [
        '/data/1/attributes/coordinates/0',
        '/data/2/attributes/occurred',
        '/data/3/attributes/colour',
        '/data/3/attributes/coordinates/1',
        '/data/3/attributes/occurred',
        '/data/3/attributes/speed',
        '/data/4/attributes/heading',
      ].sort(),
    );
    expect((await track(alpha, twin)).json().features).toEqual([]);
    expect((await detail(alpha, twin)).attributes.location).toBeNull();
  });

  it.each([
    ['no data array', { data: { type: 'positions' } }, 400, '/data'],
    ['an empty upload', { data: [] }, 400, '/data'],
    ['over 1,000 positions', { data: Array.from({ length: 1001 }, (_, i) => position([0, 0], at(-1, i))) }, 400, '/data'],
    ['another type', { data: [{ type: 'events', attributes: {} }] }, 409, '/data/0/type'],
    ['an id', { data: [{ type: 'positions', id: 'x', attributes: {} }] }, 403, '/data/0/id'],
    ['an unknown top-level member', { data: [], included: [] }, 400, '/included'],
    ['a third coordinate', { data: [position([1, 2, 3] as never, at(-1))] }, 400, '/data/0/attributes/coordinates'],
    ['a position a day and more ahead', { data: [position([1, 2], at(25 * 60))] }, 400, '/data/0/attributes/occurred'],
    ['a position older than the retention', { data: [position([1, 2], at(-91 * 24 * 60))] }, 400, '/data/0/attributes/occurred'],
    ['an occurred without offset', { data: [position([1, 2], at(-1).slice(0, 19))] }, 400, '/data/0/attributes/occurred'],
  ])('refuses %s', async (_name, body, status, pointer) => {
    const twin = await newTwin(alpha);
    expectError(await upload(alpha, twin, undefined, JSON.stringify(body)), status, { pointer });
  });

  it("keeps a twin's positions and track to its own organization, public or not", async () => {
    const twin = await newTwin(alpha, { public: true });
    expect((await upload(alpha, twin, [position([5, 5], at(-1))])).statusCode).toBe(200);
    expectError(await upload(beta, twin, [position([6, 6], at(0))]), 404);
    expectError(await track(beta, twin), 404);
    expectError(await track(beta, '00000000-0000-4000-8000-000000000000'), 404);
    // Seen by beta (public) at its location, which beta could not change.
    expect((await detail(beta, twin)).attributes.location.coordinates).toEqual([5, 5]);
  });

  it('pages a track by cursor, within since and until, at most 10,000 a page', async () => {
    const twin = await newTwin(alpha);
    const times = Array.from({ length: 7 }, (_, i) => at(-30 + i));
    await upload(alpha, twin, times.map((occurred, i) => position([i, i], occurred)));
    const first = await track(alpha, twin, `?since=${encodeURIComponent(times[1])}&until=${encodeURIComponent(times[6])}&page_size=2`);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/geo\+json\b/);
    const seen: string[] = [];
    let body = first.json();
    expect(body).toEqual(expect.objectContaining({ type: 'FeatureCollection', numberReturned: 2, timeStamp: expect.any(String) }));
    for (;;) {
      seen.push(...body.features.map((f: { properties: { occurred: string } }) => f.properties.occurred));
      const next = (body.links as { rel: string; href: string }[]).find((link) => link.rel === 'next');
      if (!next) break;
      const url = new URL(next.href);
      const page = await service.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: alpha.headers() });
      expect(page.statusCode).toBe(200);
      body = page.json();
    }
    expect(seen).toEqual(times.slice(1, 6));
    expectError(await track(alpha, twin, '?page_size=10001'), 400, { parameter: 'page_size' });
    expectError(await track(alpha, twin, '?page_after=forged.cursor'), 400, { parameter: 'page_after' });
    expectError(await track(alpha, twin, `?since=${encodeURIComponent(times[3])}&until=${encodeURIComponent(times[3])}`), 400, { parameter: 'until' });
    expectError(await track(alpha, twin, '?simplify=5'), 400, { parameter: 'simplify' });
    expectError(await track(alpha, twin, '?format=lines'), 400, { parameter: 'format' });
  });

  it('answers pages of hundreds of points, and their line, whole and in order, every member as stored', async () => {
    // Pages longer than the parts PostgreSQL writes them in (100 features, 400 vertices): the parts' order and joins.
    const twin = await newTwin(alpha);
    const count = 845;
    const sent = Array.from({ length: count }, (_, i) => position([2.3 + i / 1e4, 48.8 - i / 1e5], at(-5, i), i % 3 === 0 ? {} : { accuracy: i / 8, speed: 1e-7 * i, heading: i % 360, altitude: -i }));
    expect((await upload(alpha, twin, sent)).json()).toEqual({ meta: { received: count, new: count } });
    const read: { geometry: { coordinates: number[] }; properties: Attributes }[] = [];
    for (let url: string | undefined = `/twins/${twin}/track?page_size=230`; url; ) {
      const page = await service.inject({ method: 'GET', url, headers: alpha.headers() });
      expect(page.statusCode).toBe(200);
      const body = page.json();
      expect(body.numberReturned).toBe(body.features.length);
      read.push(...body.features);
      const next = (body.links as { rel: string; href: string }[]).find((link) => link.rel === 'next');
      url = next ? `${new URL(next.href).pathname}${new URL(next.href).search}` : undefined;
    }
    expect(read).toHaveLength(count);
    read.forEach((feature, i) => {
      const { coordinates, occurred, ...more } = (sent[i] as { attributes: Attributes }).attributes;
      expect(feature).toEqual({
        type: 'Feature',
        geometry: { type: 'Point', coordinates },
        properties: { occurred, accuracy: null, speed: null, heading: null, altitude: null, ...more },
      });
    });
    const line = await track(alpha, twin, '?format=line');
    expect(line.statusCode).toBe(200);
    const sentAttributes = sent.map((p) => (p as { attributes: { coordinates: number[]; occurred: string } }).attributes);
    expect(line.json().features).toEqual([
      {
        type: 'Feature',
        geometry: { type: 'LineString', coordinates: sentAttributes.map((a) => a.coordinates) },
        properties: { times: sentAttributes.map((a) => a.occurred), positions: count },
      },
    ]);
  });

  it('draws a track as one line with its times, thinned by simplify in metres', async () => {
    const twin = await newTwin(alpha);
    // East along the equator, one vertex 2 m off the line: kept at 1 m, dropped at 5 m.
    const metre = 1 / 111_195;
    const vertices: [number, number][] = [
      [0, 0],
      [100 * metre, 0],
      [200 * metre, 2 * metre],
      [300 * metre, 0],
      [400 * metre, 0],
    ];
    const times = vertices.map((_, i) => at(-10 + i));
    await upload(alpha, twin, vertices.map((v, i) => position(v, times[i])));
    const line = (await track(alpha, twin, '?format=line')).json();
    expect(line.features).toHaveLength(1);
    expect(line.features[0].geometry).toEqual({ type: 'LineString', coordinates: vertices });
    expect(line.features[0].properties).toEqual({ times, positions: 5 });
    // Paged, each page its own line (a lone position: its point), continued by cursor from the page's last time.
    const lines: unknown[] = [];
    for (let url: string | undefined = `/twins/${twin}/track?format=line&page_size=2`; url; ) {
      const page: { numberReturned: number; features: { geometry: unknown }[]; links: { rel: string; href: string }[] } = (
        await service.inject({ method: 'GET', url, headers: alpha.headers() })
      ).json();
      expect(page.numberReturned).toBe(1);
      lines.push(page.features[0].geometry);
      const next: { href: string } | undefined = page.links.find((link) => link.rel === 'next');
      url = next ? `${new URL(next.href).pathname}${new URL(next.href).search}` : undefined;
    }
    expect(lines).toEqual([
      { type: 'LineString', coordinates: vertices.slice(0, 2) },
      { type: 'LineString', coordinates: vertices.slice(2, 4) },
      { type: 'Point', coordinates: vertices[4] },
    ]);
    expect((await track(alpha, twin, `?format=line&since=${encodeURIComponent(at(1))}`)).json()).toEqual(expect.objectContaining({ features: [], numberReturned: 0 }));
    const kept = (await track(alpha, twin, '?format=line&simplify=1')).json().features[0];
    expect(kept.geometry.coordinates).toEqual([vertices[0], vertices[2], vertices[4]]);
    expect(kept.properties.times).toEqual([0, 2, 4].map((i) => times[i]));
    expect((await track(alpha, twin, '?format=line&simplify=5')).json().features[0].geometry.coordinates).toEqual([vertices[0], vertices[4]]);
  });

  it('records a position and a move for a location set by PATCH, by POST /my/twins/ and by a batch update', async () => {
    const created = await service.inject({
      method: 'POST',
      url: '/my/twins/',
      headers: { ...alpha.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes: { name: 'Placed', location: { type: 'Point', coordinates: [3, 4] } } }),
    });
    expect(created.statusCode).toBe(201);
    const twin = created.json().data.id as string;
    const patched = await service.inject({
      method: 'PATCH',
      url: `/my/twins/${twin}/`,
      headers: { ...alpha.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes: { location: { type: 'Point', coordinates: [5, 6] } } }),
    });
    expect(patched.statusCode).toBe(200);
    const batch = await service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...alpha.headers(), 'content-type': ATOMIC_MEDIA_TYPE },
      payload: JSON.stringify({ 'atomic:operations': [{ op: 'update', data: { type: 'twins', id: twin, attributes: { location: { type: 'Point', coordinates: [7, 8] } } } }] }),
    });
    expect(batch.statusCode).toBe(200);
    const features = (await track(alpha, twin)).json().features as { geometry: { coordinates: number[] } }[];
    expect(features.map((f) => f.geometry.coordinates)).toEqual([
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    expect((await moves(twin)).map((move) => move.attributes.coordinates)).toEqual([
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    // A position older than the PATCH moves nothing.
    await upload(alpha, twin, [position([0, 0], at(-60))]);
    expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual([7, 8]);
  });

  it('takes positions of several twins in a batch, all or nothing', async () => {
    const [one, two] = [await newTwin(alpha), await newTwin(alpha)];
    const add = (twin: string, coordinates: [number, number], occurred: string) => ({
      op: 'add',
      data: { ...position(coordinates, occurred), relationships: { twin: { data: { type: 'twins', id: twin } } } },
    });
    const run = (operations: unknown[]) =>
      service.inject({ method: 'POST', url: '/operations', headers: { ...alpha.headers(), 'content-type': ATOMIC_MEDIA_TYPE }, payload: JSON.stringify({ 'atomic:operations': operations }) });
    const stored = await run([add(one, [1, 1], at(-3)), add(two, [2, 2], at(-3)), add(one, [1.5, 1.5], at(-2)), add(one, [1.5, 1.5], at(-2))]);
    expect(stored.statusCode).toBe(200);
    expect(stored.json()).toEqual({ 'atomic:results': [{}, {}, {}, {}], meta: { positions: { received: 4, new: 3 } } });
    expect((await detail(alpha, one)).attributes.location.coordinates).toEqual([1.5, 1.5]);
    expect((await moves(one)).map((move) => move.attributes.coordinates)).toEqual([[1.5, 1.5]]);

    const foreign = await newTwin(beta);
    expectError(await run([add(one, [3, 3], at(-1)), add(foreign, [3, 3], at(-1))]), 404, { pointer: '/atomic:operations/1/data/relationships/twin' });
    expectError(await run([add(one, [3, 3], at(-1)), add(two, [3, 3], 'soon')]), 400, { pointer: '/atomic:operations/1/data/attributes/occurred' });
    expectError(await run([{ op: 'update', data: position([3, 3], at(-1)) }]), 403, { pointer: '/atomic:operations/0/op' });
    expect((await track(alpha, one)).json().features).toHaveLength(2);
  });

  it('puts twin.moved on the twin\'s event stream, resumable', async () => {
    const twin = await newTwin(alpha);
    const port = (service.app.getHttpServer().address() as AddressInfo).port;
    const stream = await SseClient.open(port, { ...alpha.headers(), 'X-Twin': twin });
    try {
      await stream.until(() => stream.comments.length > 0, 'the opening comment');
      await upload(alpha, twin, [position([4, 4], at(-2)), position([4.5, 4.5], at(-1))]);
      const [moved] = await stream.take(1);
      expect(moved.event).toBe('twin.moved');
      expect(JSON.parse(moved.data!)).toEqual({
        type: 'positions',
        attributes: { coordinates: [4.5, 4.5], occurred: at(-1), accuracy: null, speed: null, heading: null, altitude: null },
        relationships: { twin: { data: { type: 'twins', id: twin } } },
      });
      await upload(alpha, twin, [position([5, 5], at(0))]);
      await stream.take(2);
      const resumed = await SseClient.open(port, { ...alpha.headers(), 'X-Twin': twin, 'Last-Event-ID': moved.id! });
      try {
        const [replayed] = await resumed.take(1);
        expect(replayed.event).toBe('twin.moved');
        expect(JSON.parse(replayed.data!).attributes.coordinates).toEqual([5, 5]);
      } finally {
        resumed.close();
      }
    } finally {
      stream.close();
    }
  });

  it('moves a twin to the newest of two concurrent uploads', async () => {
    const twin = await newTwin(alpha);
    const uploads = Array.from({ length: 8 }, (_, i) => upload(alpha, twin, [position([i, i], at(-10 + i))]));
    await Promise.all(uploads);
    expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual([7, 7]);
    const recorded = await moves(twin);
    expect(recorded.at(-1)!.attributes.coordinates).toEqual([7, 7]);
    // Moves are recorded in the order the twin took them: each newer than the one before.
    const occurred = recorded.map((move) => move.attributes.occurred);
    expect([...occurred].sort()).toEqual(occurred);
  });

  it('stores positions a few centimetres from either pole, off the tile map', async () => {
    const twin = await newTwin(alpha);
    // Near -90° tan and sec of the latitude cancel: the tile math once took the logarithm of 0 (a 500).
    expect((await upload(alpha, twin, [position([0, -89.9999996], at(-2))])).statusCode).toBe(200);
    expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual([0, -89.9999996]);
    expect((await upload(alpha, twin, [position([179.9999999, 89.9999996], at(-1))])).statusCode).toBe(200);
    expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual([179.9999999, 89.9999996]);
  });

  it('keeps the twin at its newest position whatever order its positions arrive in (property)', async () => {
    /**
     * Positions of one twin, each at its own minute, sent in uploads of 1-4 in any order, some sent twice.
     * Degrees with 7 decimals (a centimetre): the twin's `location` is PostGIS's GeoJSON, 9 decimals at most
     * (tracks and `twin.moved` keep every digit: 'answers every number as sent').
     */
    const degrees = (max: number) => fc.integer({ min: -max * 1e7, max: max * 1e7 }).map((n) => n / 1e7);
    const walk = fc
      .uniqueArray(fc.record({ minute: fc.integer({ min: -600, max: -1 }), lon: degrees(180), lat: degrees(90) }), {
        minLength: 1,
        maxLength: 12,
        selector: (p) => p.minute,
      })
      .chain((positions) =>
        fc.record({
          positions: fc.constant(positions),
          order: fc.shuffledSubarray(positions, { minLength: positions.length, maxLength: positions.length }),
          again: fc.subarray(positions),
          sizes: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 24, maxLength: 24 }),
        }),
      );
    const coordinatesOf = (p: { lon: number; lat: number }) => [Object.is(p.lon, -0) ? 0 : p.lon, Object.is(p.lat, -0) ? 0 : p.lat];
    await fc.assert(
      fc.asyncProperty(walk, async ({ positions, order, again, sizes }) => {
        const twin = await newTwin(alpha);
        const arriving = [...order, ...again];
        const sent: typeof positions = [];
        for (let from = 0, k = 0; from < arriving.length; from += sizes[k++ % sizes.length]) {
          const batch = arriving.slice(from, from + sizes[k % sizes.length]);
          expect((await upload(alpha, twin, batch.map((p) => position([p.lon, p.lat], at(p.minute))))).statusCode).toBe(200);
          sent.push(...batch);
          const newest = sent.reduce((a, b) => (b.minute > a.minute ? b : a));
          expect((await detail(alpha, twin)).attributes.location.coordinates).toEqual(coordinatesOf(newest));
        }
        // The track holds each position once, in time order.
        const features = (await track(alpha, twin)).json().features as { geometry: { coordinates: number[] }; properties: { occurred: string } }[];
        const inTime = [...positions].sort((a, b) => a.minute - b.minute);
        expect(features.map((f) => f.properties.occurred)).toEqual(inTime.map((p) => at(p.minute)));
        expect(features.map((f) => f.geometry.coordinates)).toEqual(inTime.map(coordinatesOf));
      }),
      { numRuns: 25 },
    );
  });

  it('keeps positions in day partitions, and drops whole days past the retention', async () => {
    const partitions = service.app.get(PositionPartitions);
    const partitioned = await service.dataSource.query(`SELECT c.relkind FROM pg_class c WHERE c.relname = 'positions'`);
    expect(partitioned).toEqual([{ relkind: 'p' }]);
    const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const names = async () =>
      (await service.dataSource.query(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'positions'::regclass`)).map(
        (row: { relname: string }) => row.relname,
      );
    // Made ahead: today and the coming days.
    expect(await names()).toEqual(expect.arrayContaining([0, 1, 2, 3].map((d) => `positions_${day(d).replace(/-/g, '')}`)));
    // A day past the retention (as if kept from before it was lowered) is dropped whole; today stays.
    const old = day(-200);
    await partitions.ensure([old]);
    const twin = await newTwin(alpha);
    await service.dataSource.query(
      `INSERT INTO positions (organization_id, twin_id, occurred, location) VALUES ($1, $2, $3, ST_SetSRID(ST_MakePoint(0, 0), 4326))`,
      [alpha.organizationId, twin, `${old}T12:00:00Z`],
    );
    expect(await partitions.dropExpired()).toEqual(expect.arrayContaining([old]));
    expect(await names()).not.toContain(`positions_${old.replace(/-/g, '')}`);
    expect(await names()).toContain(`positions_${day(0).replace(/-/g, '')}`);
    expect((await track(alpha, twin)).json().features).toEqual([]);
  });

  it('makes a partition again when another instance dropped one this instance knew', async () => {
    const twin = await newTwin(alpha);
    const fiveDaysAgo = at(-5 * 24 * 60);
    expect((await upload(alpha, twin, [position([1, 1], fiveDaysAgo)])).json()).toEqual({ meta: { received: 1, new: 1 } });
    await service.dataSource.query(`DROP TABLE positions_${fiveDaysAgo.slice(0, 10).replace(/-/g, '')}`);
    expect((await upload(alpha, twin, [position([2, 2], fiveDaysAgo)])).json()).toEqual({ meta: { received: 1, new: 1 } });
    expect((await track(alpha, twin)).json().features.map((f: { geometry: { coordinates: number[] } }) => f.geometry.coordinates)).toEqual([[2, 2]]);
  });
});
