import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Sql } from '../../src/database/sql';
import { EventBus } from '../../src/events/event-bus';
import { PER_CHUNK_FROM } from '../../src/geofences/geofence-crossings';
import { GeofenceIndex } from '../../src/geofences/geofence-index';
import { ATOMIC_MEDIA_TYPE } from '../../src/operations/atomic-document';
import { PlaceImporter } from '../../src/places/place-importer';
import { PositionsRepository } from '../../src/twins/positions/positions.repository';
import { SseClient } from '../support/sse-client';
import { document, embeddedDatabase, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * Geofences (docs/API.md, "Geofences"): CRUD per organization, geometries PostGIS holds valid, the twins
 * inside one; and crossings: a position entering or leaving one is an event of the twin's timeline and one
 * change of the log, exactly once, in `occurred` order.
 */

type Ring = [number, number][];
type Attributes = Record<string, unknown>;

/** The closed ring of the box [x0, x1] × [y0, y1]. */
const box = (x0: number, y0: number, x1: number, y1: number): Ring => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
  [x0, y0],
];
const polygon = (...rings: Ring[]) => ({ type: 'Polygon', coordinates: rings });

const MINUTE = 60_000;
/** An instant `minutes` from now (whole minutes), as the service answers it. */
const at = (minutes: number): string => new Date(Math.floor(Date.now() / MINUTE) * MINUTE + minutes * MINUTE).toISOString().replace('Z', '000Z');
const position = (coordinates: [number, number], occurred: string) => ({ type: 'positions', attributes: { coordinates, occurred } });

/** A recorded crossing as the test compares it: its kind, geofence, `occurred` and coordinates. */
type Crossing = [kind: string, geofence: string, occurred: string, coordinates: number[]];

describe('geofences', () => {
  let service: TestApp;
  let alpha: TestTenant;
  let beta: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '100' });
    await service.app.listen(0, '127.0.0.1');
    alpha = await service.tenant({ organization: 'Geo alpha', twin: 'Van' });
    beta = await service.tenant({ organization: 'Geo beta', twin: 'Truck' });
  });
  afterAll(() => service.close());

  const json = (tenant: TestTenant) => ({ ...tenant.headers(), 'content-type': JSON_API });
  const create = (tenant: TestTenant, attributes: Attributes) => service.inject({ method: 'POST', url: '/geofences/', headers: json(tenant), payload: document({ type: 'geofences', attributes }) });
  const created = async (tenant: TestTenant, geometry: unknown, name = 'Zone'): Promise<string> => {
    const response = await create(tenant, { name, geometry });
    expect(response.statusCode).toBe(201);
    return response.json().data.id as string;
  };
  const get = (tenant: TestTenant, url: string) => service.inject({ method: 'GET', url, headers: tenant.headers() });
  const patch = (tenant: TestTenant, id: string, attributes: Attributes) =>
    service.inject({ method: 'PATCH', url: `/geofences/${id}`, headers: json(tenant), payload: document({ type: 'geofences', id, attributes }) });

  describe('routes', () => {
    it('creates, reads, lists, changes and deletes a geofence', async () => {
      const response = await create(alpha, { name: 'Depot', description: 'The yard', geometry: polygon(box(0, 0, 1, 1), box(0.4, 0.4, 0.6, 0.6)) });
      expect(response.statusCode).toBe(201);
      const { data } = response.json();
      expect(data).toEqual({
        type: 'geofences',
        id: expect.any(String),
        attributes: { name: 'Depot', description: 'The yard', geometry: polygon(box(0, 0, 1, 1), box(0.4, 0.4, 0.6, 0.6)), created: expect.any(String), modified: expect.any(String) },
      });
      expect((await get(alpha, `/geofences/${data.id}`)).json().data).toEqual(data);

      const multi = { type: 'MultiPolygon', coordinates: [[box(10, 10, 11, 11)], [box(12, 12, 13, 13)]] };
      const second = await created(alpha, multi, 'Two fields');
      const list = (await get(alpha, '/geofences/?page_size=1&page_number=2')).json();
      expect(list.meta.pagination).toEqual(expect.objectContaining({ page: 2 }));
      expect(list.data).toHaveLength(1);
      expect(list.links.last).toMatch(/page_number=2$/);
      expect((await get(alpha, `/geofences/${second}`)).json().data.attributes.geometry).toEqual(multi);

      const renamed = await patch(alpha, data.id, { name: 'Depot north', description: null });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json().data.attributes).toEqual(expect.objectContaining({ name: 'Depot north', description: null, geometry: data.attributes.geometry }));
      const reshaped = await patch(alpha, data.id, { geometry: polygon(box(0, 0, 2, 2)) });
      expect(reshaped.json().data.attributes).toEqual(expect.objectContaining({ name: 'Depot north', geometry: polygon(box(0, 0, 2, 2)) }));

      expect((await service.inject({ method: 'DELETE', url: `/geofences/${data.id}`, headers: alpha.headers() })).statusCode).toBe(204);
      expectError(await get(alpha, `/geofences/${data.id}`), 404);
      expectError(await service.inject({ method: 'DELETE', url: `/geofences/${data.id}`, headers: alpha.headers() }), 404);
    });

    it.each([
      ['a self-intersecting bowtie', { name: 'x', geometry: polygon([[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]) }, '/data/attributes/geometry', /Self-intersection/],
      ['an unclosed ring', { name: 'x', geometry: polygon([[0, 0], [1, 0], [1, 1], [0, 1]]) }, '/data/attributes/geometry/coordinates/0', /closed/],
      ['too few positions', { name: 'x', geometry: polygon([[0, 0], [1, 0], [0, 0]]) }, '/data/attributes/geometry/coordinates/0', /at least 4/],
      ['a hole outside its shell', { name: 'x', geometry: polygon(box(0, 0, 1, 1), box(5, 5, 6, 6)) }, '/data/attributes/geometry', /Hole lies outside shell/],
      ['a point', { name: 'x', geometry: { type: 'Point', coordinates: [0, 0] } }, '/data/attributes/geometry/type', /Polygon/],
      ['a string', { name: 'x', geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' }, '/data/attributes/geometry', /GeoJSON/],
      ['no geometry', { name: 'x' }, '/data/attributes/geometry', /GeoJSON/],
      ['a longitude out of range', { name: 'x', geometry: polygon([[0, 0], [181, 0], [1, 1], [0, 0]]) }, '/data/attributes/geometry/coordinates/0/1/0', /longitude/],
      ['a latitude that is no number', { name: 'x', geometry: polygon([[0, 0], [1, '0'], [1, 1], [0, 0]] as never) }, '/data/attributes/geometry/coordinates/0/1/1', /latitude/],
      ['a position of three numbers', { name: 'x', geometry: polygon([[0, 0, 5], [1, 0], [1, 1], [0, 0]] as never) }, '/data/attributes/geometry/coordinates/0/0', /longitude, latitude/],
      ['an unknown member', { name: 'x', geometry: { ...polygon(box(0, 0, 1, 1)), crs: {} } }, '/data/attributes/geometry/crs', /Unknown member/],
      ['an empty name', { name: '', geometry: polygon(box(0, 0, 1, 1)) }, '/data/attributes/name', /./],
    ])('refuses %s with a pointer', async (_what, attributes, pointer, detail) => {
      const error = expectError(await create(alpha, attributes), 400, { pointer });
      expect(error.detail).toMatch(detail);
    });

    it('names ST_IsValidReason for an invalid geometry, on PATCH too', async () => {
      const id = await created(alpha, polygon(box(0, 0, 1, 1)));
      const error = expectError(await patch(alpha, id, { geometry: polygon([[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]) }), 400, { pointer: '/data/attributes/geometry' });
      expect(error.detail).toMatch(/^geometry is not valid: Self-intersection\[0\.5 0\.5\] \(PostGIS ST_IsValidReason\)\.$/);
      expect((await get(alpha, `/geofences/${id}`)).json().data.attributes.geometry).toEqual(polygon(box(0, 0, 1, 1)));
    });

    it('refuses more than 10,000 vertices, and takes 10,000', async () => {
      const circle = (n: number): Ring => {
        const ring: Ring = Array.from({ length: n - 1 }, (_, i) => [Math.cos((2 * Math.PI * i) / (n - 1)), Math.sin((2 * Math.PI * i) / (n - 1))] as [number, number]);
        return [...ring, ring[0]];
      };
      expectError(await create(alpha, { name: 'Round', geometry: polygon(circle(10_001)) }), 400, { pointer: '/data/attributes/geometry' });
      expect((await create(alpha, { name: 'Round', geometry: polygon(circle(10_000)) })).statusCode).toBe(201);
    });

    it("keeps geofences to their organization: another's are 404s", async () => {
      const id = await created(alpha, polygon(box(0, 0, 1, 1)), 'Private');
      expectError(await get(beta, `/geofences/${id}`), 404);
      expectError(await get(beta, `/geofences/${id}/twins/`), 404);
      expectError(await patch(beta, id, { name: 'Taken' }), 404);
      expectError(await service.inject({ method: 'DELETE', url: `/geofences/${id}`, headers: beta.headers() }), 404);
      expect((await get(beta, '/geofences/')).json().data.map((g: { id: string }) => g.id)).not.toContain(id);
      expect((await get(alpha, `/geofences/${id}`)).json().data.attributes.name).toBe('Private');
    });

    it("lists the organization's twins inside, the boundary in and a hole out", async () => {
      const id = await created(alpha, polygon(box(20, 20, 22, 22), box(20.5, 20.5, 21, 21)), 'Park');
      const at = (coordinates: [number, number]) => ({ location: { type: 'Point', coordinates } });
      const inside = await service.createTwin(alpha, { name: 'A inside', ...at([21.5, 21.5]) });
      const edge = await service.createTwin(alpha, { name: 'B on the edge', ...at([22, 21]) });
      await service.createTwin(alpha, { name: 'C in the hole', ...at([20.75, 20.75]) });
      await service.createTwin(alpha, { name: 'D outside', ...at([23, 23]) });
      await service.createTwin(alpha, { name: 'E nowhere' });
      await service.createTwin(beta, { name: 'F of beta', public: true, ...at([21.5, 21.5]) });
      const page = (await get(alpha, `/geofences/${id}/twins/`)).json();
      expect(page.data.map((twin: { id: string }) => twin.id)).toEqual([inside, edge]);
      expect(page.data[0]).toEqual(expect.objectContaining({ type: 'twins', attributes: expect.objectContaining({ name: 'A inside' }) }));
      expect(page.meta.pagination).toEqual(expect.objectContaining({ count: 2 }));
      expect((await get(alpha, `/geofences/${id}/twins/?page_size=1&page_number=2`)).json().data.map((twin: { id: string }) => twin.id)).toEqual([edge]);
    });
  });

  describe('crossings', () => {
    const upload = (tenant: TestTenant, twinId: string, data: unknown[]) =>
      service.inject({ method: 'POST', url: `/twins/${twinId}/positions`, headers: json(tenant), payload: JSON.stringify({ data }) });
    const uploaded = async (tenant: TestTenant, twinId: string, data: unknown[]) => expect((await upload(tenant, twinId, data)).statusCode).toBe(200);
    const patchTwin = async (tenant: TestTenant, twinId: string, coordinates: [number, number]) => {
      const response = await service.inject({
        method: 'PATCH',
        url: `/my/twins/${twinId}/`,
        headers: json(tenant),
        payload: document({ type: 'twins', id: twinId, attributes: { location: { type: 'Point', coordinates } } }),
      });
      expect(response.statusCode).toBe(200);
    };
    /** The twin's crossings in the change log, in position order (each change's resource is its event). */
    const crossings = async (twinId: string): Promise<Crossing[]> => {
      const rows: { kind: string; resource: string }[] = await service.dataSource.query(
        `SELECT kind, resource FROM changes WHERE twin_id = $1 AND kind LIKE 'geofence.%' ORDER BY position`,
        [twinId],
      );
      return rows.map(({ kind, resource }) => {
        const event = JSON.parse(resource);
        expect(event.attributes.name).toBe(kind);
        expect(event.attributes.category).toBe('geofence');
        expect(event.attributes.data.twin).toBe(twinId);
        return [kind, event.attributes.data.geofence, event.attributes.occurred, event.attributes.data.coordinates];
      });
    };
    const newTwin = (tenant: TestTenant, name = 'Courier') => service.createTwin(tenant, { name });

    it('records an entry and an exit of an upload once, as events of the timeline and changes carrying them', async () => {
      const zone = await created(alpha, polygon(box(30, 30, 31, 31)));
      const twin = await newTwin(alpha);
      await uploaded(alpha, twin, [position([29.5, 30.5], at(-3)), position([30.5, 30.5], at(-2)), position([31.5, 30.5], at(-1))]);
      expect(await crossings(twin)).toEqual([
        ['geofence.entered', zone, at(-2), [30.5, 30.5]],
        ['geofence.exited', zone, at(-1), [31.5, 30.5]],
      ]);
      const events = await service.dataSource.query(`SELECT id, name, category, data, occurred FROM events WHERE twin_id = $1 ORDER BY "timestamp", id`, [twin]);
      expect(events.map((e: { name: string; data: unknown }) => [e.name, e.data])).toEqual([
        ['geofence.entered', { twin, geofence: zone, coordinates: [30.5, 30.5] }],
        ['geofence.exited', { twin, geofence: zone, coordinates: [31.5, 30.5] }],
      ]);
      // One change per crossing, and no event.created beside it.
      const kinds = await service.dataSource.query(`SELECT kind FROM changes WHERE twin_id = $1 ORDER BY position`, [twin]);
      expect(kinds.map((k: { kind: string }) => k.kind).sort()).toEqual(['geofence.entered', 'geofence.exited', 'twin.created', 'twin.moved']);
      // The timeline shows them, in occurred order.
      const timeline = await service.inject({ method: 'GET', url: '/events/?sort=timestamp', headers: alpha.headers({ twin }) });
      expect(timeline.json().data.map((e: { attributes: { name: string; occurred: string } }) => [e.attributes.name, e.attributes.occurred])).toEqual([
        ['geofence.entered', at(-2)],
        ['geofence.exited', at(-1)],
      ]);
      // A retried upload crosses nothing more.
      await uploaded(alpha, twin, [position([29.5, 30.5], at(-3)), position([30.5, 30.5], at(-2)), position([31.5, 30.5], at(-1))]);
      expect(await crossings(twin)).toHaveLength(2);
    });

    it('enters with a first location inside, counts the boundary inside and a hole outside', async () => {
      const park = await created(alpha, polygon(box(40, 40, 42, 42), box(40.5, 40.5, 41, 41)));
      const twin = await newTwin(alpha);
      await uploaded(alpha, twin, [position([42, 41], at(-5))]);
      await uploaded(alpha, twin, [position([40.75, 40.75], at(-4))]);
      await uploaded(alpha, twin, [position([40.5, 40.75], at(-3))]);
      expect(await crossings(twin)).toEqual([
        ['geofence.entered', park, at(-5), [42, 41]],
        ['geofence.exited', park, at(-4), [40.75, 40.75]],
        ['geofence.entered', park, at(-3), [40.5, 40.75]],
      ]);
    });

    it('crosses nothing with late positions; an unsorted upload crosses in occurred order', async () => {
      const zone = await created(alpha, polygon(box(50, 50, 51, 51)));
      const twin = await newTwin(alpha);
      await uploaded(alpha, twin, [position([49, 49], at(-20))]);
      await uploaded(alpha, twin, [position([50.5, 50.5], at(-10)), position([52, 52], at(-9)), position([50.2, 50.2], at(-12)), position([49.5, 49.5], at(-11))]);
      expect(await crossings(twin)).toEqual([
        ['geofence.entered', zone, at(-12), [50.2, 50.2]],
        ['geofence.exited', zone, at(-11), [49.5, 49.5]],
        ['geofence.entered', zone, at(-10), [50.5, 50.5]],
        ['geofence.exited', zone, at(-9), [52, 52]],
      ]);
      // Older than the twin's location: into the track, across nothing.
      await uploaded(alpha, twin, [position([50.5, 50.5], at(-15)), position([49, 49], at(-14))]);
      expect(await crossings(twin)).toHaveLength(4);
    });

    it('records crossings of a batch, per twin, and of a location set by PATCH', async () => {
      const zone = await created(alpha, polygon(box(60, 60, 61, 61)));
      const [one, two] = [await newTwin(alpha), await newTwin(alpha)];
      const add = (twin: string, coordinates: [number, number], occurred: string) => ({ op: 'add', data: { ...position(coordinates, occurred), relationships: { twin: { data: { type: 'twins', id: twin } } } } });
      const batch = await service.inject({
        method: 'POST',
        url: '/operations',
        headers: { ...alpha.headers(), 'content-type': ATOMIC_MEDIA_TYPE },
        payload: JSON.stringify({ 'atomic:operations': [add(two, [60.5, 60.5], at(-3)), add(one, [60.5, 60.5], at(-3)), add(one, [62, 62], at(-2))] }),
      });
      expect(batch.statusCode).toBe(200);
      expect(await crossings(one)).toEqual([
        ['geofence.entered', zone, at(-3), [60.5, 60.5]],
        ['geofence.exited', zone, at(-2), [62, 62]],
      ]);
      expect(await crossings(two)).toEqual([['geofence.entered', zone, at(-3), [60.5, 60.5]]]);

      await patchTwin(alpha, one, [60.25, 60.25]);
      await patchTwin(alpha, one, [60.75, 60.75]);
      await patchTwin(alpha, two, [59, 59]);
      expect((await crossings(one)).map(([kind, geofence, , coordinates]) => [kind, geofence, coordinates])).toEqual([
        ['geofence.entered', zone, [60.5, 60.5]],
        ['geofence.exited', zone, [62, 62]],
        ['geofence.entered', zone, [60.25, 60.25]],
      ]);
      expect((await crossings(two)).map(([kind]) => kind)).toEqual(['geofence.entered', 'geofence.exited']);
    });

    it('records the crossings of places moved by an import, once, and none for an unchanged re-import', async () => {
      const zone = await created(alpha, polygon(box(64, 64, 65, 65)));
      const dir = mkdtempSync(join(tmpdir(), 'geofence-import-'));
      const file = join(dir, 'places.geojson');
      const place = (id: string, coordinates: [number, number]) => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates }, properties: { name: `Stall ${id}` } });
      const importer = new PlaceImporter(service.app.get(Sql), service.app.get(EventBus).channel);
      const imported = async (...features: unknown[]) => {
        writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
        return importer.importFile(alpha.organizationId, file);
      };
      try {
        expect(await imported(place('in', [64.5, 64.5]), place('out', [66, 66]))).toEqual(expect.objectContaining({ inserted: 2, crossings: 1 }));
        const ids = Object.fromEntries(
          (await service.dataSource.query(`SELECT place_id, id FROM twins WHERE organization_id = $1 AND place_id IN ('in', 'out')`, [alpha.organizationId])).map(
            (row: { place_id: string; id: string }) => [row.place_id, row.id],
          ),
        );
        expect((await crossings(ids.in)).map(([kind, geofence, , coordinates]) => [kind, geofence, coordinates])).toEqual([['geofence.entered', zone, [64.5, 64.5]]]);
        expect(await crossings(ids.out)).toEqual([]);

        expect(await imported(place('in', [63, 63]), place('out', [65, 65]))).toEqual(expect.objectContaining({ updated: 2, crossings: 2 }));
        expect((await crossings(ids.in)).map(([kind]) => kind)).toEqual(['geofence.entered', 'geofence.exited']);
        expect((await crossings(ids.out)).map(([kind, , , coordinates]) => [kind, coordinates])).toEqual([['geofence.entered', [65, 65]]]);

        expect(await imported(place('in', [63, 63]), place('out', [65, 65]))).toEqual(expect.objectContaining({ unchanged: 2, crossings: 0 }));
        expect(await crossings(ids.in)).toHaveLength(2);
        expect(await crossings(ids.out)).toHaveLength(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('records no crossing when a geofence is created, changed or deleted around a twin', async () => {
      const twin = await newTwin(alpha);
      await uploaded(alpha, twin, [position([70.5, 70.5], at(-2))]);
      const zone = await created(alpha, polygon(box(70, 70, 71, 71)));
      expect((await get(alpha, `/geofences/${zone}/twins/`)).json().data.map((t: { id: string }) => t.id)).toEqual([twin]);
      expect((await patch(alpha, zone, { geometry: polygon(box(72, 72, 73, 73)) })).statusCode).toBe(200);
      expect((await service.inject({ method: 'DELETE', url: `/geofences/${zone}`, headers: alpha.headers() })).statusCode).toBe(204);
      expect(await crossings(twin)).toEqual([]);
    });

    it("puts crossings on the twin's event stream, resumable", async () => {
      const zone = await created(alpha, polygon(box(80, 80, 81, 81)));
      const twin = await newTwin(alpha);
      const port = (service.app.getHttpServer().address() as AddressInfo).port;
      const stream = await SseClient.open(port, { ...alpha.headers(), 'X-Twin': twin });
      try {
        await stream.until(() => stream.comments.length > 0, 'the opening comment');
        await uploaded(alpha, twin, [position([80.5, 80.5], at(-2)), position([82, 82], at(-1))]);
        const messages = await stream.take(3);
        const ids = messages.map((message) => BigInt(message.id!));
        expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
        const crossed = messages.filter((message) => message.event!.startsWith('geofence.'));
        expect(crossed.map((message) => message.event)).toEqual(['geofence.entered', 'geofence.exited']);
        expect(JSON.parse(crossed[0].data!)).toEqual({
          type: 'events',
          id: expect.any(String),
          attributes: { name: 'geofence.entered', category: 'geofence', data: { twin, geofence: zone, coordinates: [80.5, 80.5] }, timestamp: expect.any(String), occurred: at(-2) },
        });
        const resumed = await SseClient.open(port, { ...alpha.headers(), 'X-Twin': twin, 'Last-Event-ID': crossed[0].id! });
        try {
          const replayed = await resumed.take(messages.length - messages.indexOf(crossed[0]) - 1);
          expect(replayed.map((message) => message.event)).toContain('geofence.exited');
        } finally {
          resumed.close();
        }
      } finally {
        stream.close();
      }
    });

    (embeddedDatabase() ? it.skip : it)('records each crossing of concurrent uploads of one twin exactly once', async () => {
      await created(alpha, polygon(box(90, 10, 91, 11)));
      const twin = await newTwin(alpha);
      // Twenty uploads at once, in and out by turns: whichever order they take the twin, entries and exits alternate.
      await Promise.all(Array.from({ length: 20 }, (_, i) => upload(alpha, twin, [position(i % 2 === 0 ? [90.5, 10.5] : [92, 12], at(-30 + i))])));
      const kinds = (await crossings(twin)).map(([kind]) => kind);
      expect(kinds.length).toBeGreaterThan(0);
      kinds.forEach((kind, i) => expect(kind).toBe(i % 2 === 0 ? 'geofence.entered' : 'geofence.exited'));
      const location = (await get(alpha, `/twins/${twin}/`)).json().data.attributes.location.coordinates;
      expect(kinds.at(-1)).toBe(location[0] === 90.5 ? 'geofence.entered' : 'geofence.exited');
    });

    describe("with the organization's geofences held by the instance (geofence-index.ts)", () => {
      const index = () => service.app.get(GeofenceIndex);
      /** PER_CHUNK_FROM positions of a straight walk from (29, 29.5) east, a minute apart. */
      const walk = (from: number) =>
        Array.from({ length: PER_CHUNK_FROM }, (_, i) => ({ lon: 29 + i / 1000, lat: 29.5, occurred: at(from + i), occurredMs: Date.parse(at(from + i)), accuracy: null, speed: null, heading: null, altitude: null }));
      /** A tenant with one geofence, the box [30, 31]², held by this instance after a batch far from it. */
      const heldTenant = async (name: string) => {
        const tenant = await service.tenant({ organization: name });
        const zone = await created(tenant, polygon(box(30, 30, 31, 31)));
        const warmer = await newTwin(tenant, 'Warmer');
        await uploaded(tenant, warmer, Array.from({ length: PER_CHUNK_FROM }, (_, i) => position([-100, -50 + i / 100], at(-300 + i))));
        await index().settled();
        const version = index().versionOf(tenant.organizationId)!;
        expect(version).toEqual(expect.any(String));
        return { tenant, zone, version };
      };

      it('finds a batch’s crossings per twin in occurred order, and leaves to PostgreSQL what it cannot decide', async () => {
        const { tenant, zone, version } = await heldTenant('Held paths');
        const found = (twinIds: string[], points: [number, number, number][]) =>
          index().crossingsOf(tenant.organizationId, twinIds, points.map(([lon, lat, occurredMs]) => ({ lon, lat, occurredMs })));
        // Twin b: inside at its earliest position (sent last), out, in again; twin a: out, then in.
        expect(found(['b', 'a', 'b', 'a', 'b'], [[30.1, 30.1, 4], [0, 0, 1], [30.5, 30.5, 2], [30.5, 30.5, 2], [32, 30.5, 3]])).toEqual({
          version,
          firstOf: [2, 1],
          firstTwin: [1],
          firstGeofence: [1],
          point: [4, 0, 3],
          geofence: [1, 1, 1],
          entered: [false, true, true],
          ids: [zone],
        });
        // Two positions of a twin in one millisecond, a point on the boundary: PostgreSQL's to say.
        expect(found(['a', 'a'], [[0, 0, 1], [1, 1, 1]])).toBeUndefined();
        expect(found(['a', 'a'], [[0, 0, 1], [30, 30.5, 2]])).toBeUndefined();
      });

      it('drops an organization with geofences whole, its version with it', async () => {
        const { tenant } = await heldTenant('Held and gone');
        await service.dataSource.query(`DELETE FROM organizations WHERE id = $1`, [tenant.organizationId]);
        const left = await service.dataSource.query(`SELECT (SELECT count(*) FROM geofences WHERE organization_id = $1)::int AS geofences, (SELECT count(*) FROM geofence_sets WHERE organization_id = $1)::int AS sets`, [tenant.organizationId]);
        expect(left).toEqual([{ geofences: 0, sets: 0 }]);
      });

      it('takes the crossings the instance found when they are current, and searches when they are not', async () => {
        const { tenant, zone, version } = await heldTenant('Held versions');
        const repository = service.app.get(PositionsRepository);
        // Crossings that claim an entry at the fourth point, which PostGIS would not find (the walk is
        // outside the box): recorded at the current version with every position new, so the statement
        // does take them; ignored at any other version, and when a position is not new.
        const claim = (at: string) => ({ version: at, firstOf: [0], firstTwin: [], firstGeofence: [], point: [3], geofence: [1], entered: [true], ids: [zone] });
        const steps = walk(-100);
        const taken = await newTwin(tenant, 'Taken');
        await repository.record(tenant.organizationId, steps.map(() => taken), steps, null, claim(version));
        expect(await crossings(taken)).toEqual([['geofence.entered', zone, steps[3].occurred, [steps[3].lon, steps[3].lat]]]);
        const stale = await newTwin(tenant, 'Stale');
        const rows = await repository.record(tenant.organizationId, steps.map(() => stale), steps, null, claim(String(BigInt(version) - 1n)));
        expect(await crossings(stale)).toEqual([]);
        expect(rows[0].geofences).toBe(version);
        const late = await newTwin(tenant, 'Late');
        await uploaded(tenant, late, [position([28, 28], steps[0].occurred)]);
        await repository.record(tenant.organizationId, steps.map(() => late), steps, null, claim(version));
        expect(await crossings(late)).toEqual([]);
      });

      it("searches when another instance changed the organization's geofences, and holds the new ones after", async () => {
        const { tenant, zone, version } = await heldTenant('Held elsewhere');
        // As another instance would: the box moved under the walk, this instance's copy now stale.
        await service.dataSource.query(`UPDATE geofences SET geometry = ST_MakeEnvelope(29.0055, 29, 29.0105, 30, 4326) WHERE id = $1`, [zone]);
        const twin = await newTwin(tenant, 'Walker');
        const steps = walk(-100);
        await uploaded(tenant, twin, steps.map((step) => position([step.lon, step.lat], step.occurred)));
        const expected: Crossing[] = [
          ['geofence.entered', zone, steps[6].occurred, [29.006, 29.5]],
          ['geofence.exited', zone, steps[11].occurred, [29.011, 29.5]],
        ];
        expect(await crossings(twin)).toEqual(expected);
        await index().settled();
        expect(BigInt(index().versionOf(tenant.organizationId)!)).toBeGreaterThan(BigInt(version));
        // The same walk again, found in memory now.
        const again = await newTwin(tenant, 'Again');
        const later = walk(-50);
        expect(index().crossingsOf(tenant.organizationId, later.map(() => again), later)).toMatchObject({ point: [6, 11], entered: [true, false] });
        await uploaded(tenant, again, later.map((step) => position([step.lon, step.lat], step.occurred)));
        expect(await crossings(again)).toEqual(expected.map(([kind, geofence, , coordinates], i) => [kind, geofence, later[[6, 11][i]].occurred, coordinates]));
      });
    });

    it('records exactly the crossings PostGIS computes from the ordered positions (random walks, random boxes)', async () => {
      // A walk of up to 80 points on a half-degree grid, drifting east with turns back (geofences are
      // looked up per 32 consecutive points of a path, so it spans 1 to 3 lookups, far apart), and boxes
      // around points of it, their sides on the same grid (points on the boundary): a box near one part of
      // the walk is a candidate of that part's lookup only.
      const walk = fc
        .array(fc.tuple(fc.integer({ min: -1, max: 3 }), fc.integer({ min: -1, max: 1 })), { minLength: 1, maxLength: 80, size: 'max' })
        .map((moves) => moves.reduce<[number, number][]>((path, [dx, dy]) => [...path, [(path.at(-1)?.[0] ?? 20) + dx / 2, (path.at(-1)?.[1] ?? 20) + dy / 2]], []));
      const boxAround = fc.tuple(fc.nat(), fc.integer({ min: -1, max: 1 }), fc.integer({ min: -1, max: 1 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }));
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(boxAround, { minLength: 1, maxLength: 3 }), walk, fc.integer({ min: 1, max: 3 }), fc.integer(), async (around, points, uploads, seed) => {
          const boxes = around.map(([at, dx, dy, w, h]) => {
            const [x, y] = points[at % points.length];
            return [x + dx / 2 - w / 2, y + dy / 2 - h / 2, x + dx / 2 + w / 2, y + dy / 2 + h / 2];
          });
          const tenant = await service.tenant({ organization: `Walk ${++run}` });
          const zones: string[] = [];
          for (const [x0, y0, x1, y1] of boxes) zones.push(await created(tenant, polygon(box(Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)))));
          const twin = await service.createTwin(tenant, { name: 'Walker' });
          // The same walk by a second twin, in uploads too small to be looked up per chunk (crossingLookupFor):
          // both ways of finding crossings must find these.
          const stepper = await service.createTwin(tenant, { name: 'Stepper' });
          const times = points.map((_, i) => at(-100 + i));
          // Consecutive chunks, each shuffled: every upload newer than the last, unsorted inside.
          const upload = async (walker: string, size: number, path = points) => {
            for (let start = 0; start < path.length; start += size) {
              const chunk = path.slice(start, start + size).map((point, i) => position(point, times[start + i]));
              const shuffled = chunk.map((item, i) => ({ item, key: (seed * 31 + i * 17) % 7 })).sort((a, b) => a.key - b.key).map(({ item }) => item);
              await uploaded(tenant, walker, shuffled);
            }
          };
          await upload(twin, Math.ceil(points.length / uploads));
          await upload(stepper, PER_CHUNK_FROM - 1);
          // And in uploads of at least PER_CHUNK_FROM with the organization's geofences held by this instance
          // (geofence-index.ts, loaded after the first such upload): the walk, whose points on a boundary
          // leave it to PostgreSQL, and the walk nudged off the grid (never within 1e-6° of a side), whose
          // crossings are found in memory.
          const index = service.app.get(GeofenceIndex);
          const warmer = await service.createTwin(tenant, { name: 'Warmer' });
          await uploaded(tenant, warmer, Array.from({ length: PER_CHUNK_FROM }, (_, i) => position([-100, -50 + i / 100], at(-200 + i))));
          await index.settled();
          expect(index.versionOf(tenant.organizationId)).toEqual(expect.any(String));
          const holder = await service.createTwin(tenant, { name: 'Holder' });
          const size = Math.max(PER_CHUNK_FROM, Math.ceil(points.length / uploads));
          await upload(holder, size);
          const nudged = points.map(([x, y], i): [number, number] => [x + ((i % 5) + 1) * 1e-6, y - ((i % 3) + 1) * 1e-6]);
          const nudgedTwin = await service.createTwin(tenant, { name: 'Nudged' });
          const found = jest.spyOn(index, 'crossingsOf');
          await upload(nudgedTwin, size, nudged);
          if (points.length >= PER_CHUNK_FROM) expect(found.mock.results.some((result) => result.value !== undefined)).toBe(true);
          found.mockRestore();
          /** The crossings PostGIS computes from the path's points in order. */
          const expectedOf = async (path: [number, number][]): Promise<Crossing[]> => {
            const covers: { geofence: string; ord: string; inside: boolean }[] = await service.dataSource.query(
              `SELECT g.id AS geofence, p.ord::text AS ord, ST_Covers(g.geometry, ST_SetSRID(ST_MakePoint(p.x, p.y), 4326)) AS inside
                 FROM geofences g, unnest($2::float8[], $3::float8[]) WITH ORDINALITY AS p(x, y, ord) WHERE g.id = ANY ($1::uuid[])`,
              [zones, path.map(([x]) => x), path.map(([, y]) => y)],
            );
            const inside = (geofence: string, i: number) => covers.find((c) => c.geofence === geofence && Number(c.ord) === i + 1)!.inside;
            const expected: Crossing[] = [];
            path.forEach((point, i) => {
              for (const zone of [...zones].sort()) {
                const was = i > 0 && inside(zone, i - 1);
                if (inside(zone, i) !== was) expected.push([inside(zone, i) ? 'geofence.entered' : 'geofence.exited', zone, times[i], point]);
              }
            });
            return expected;
          };
          const expected = await expectedOf(points);
          expect(await crossings(twin)).toEqual(expected);
          expect(await crossings(stepper)).toEqual(expected);
          expect(await crossings(holder)).toEqual(expected);
          expect(await crossings(nudgedTwin)).toEqual(await expectedOf(nudged));
        }),
        { numRuns: 25 },
      );
    }, 120_000);
  });
});
