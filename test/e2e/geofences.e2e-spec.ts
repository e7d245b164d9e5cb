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
});
