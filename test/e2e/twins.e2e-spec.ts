import { document, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

const LIST_ATTRIBUTES = [
  'created',
  'modified',
  'name',
  'description',
  'personal',
  'connections',
  'personality',
  'meta-data',
  'place-id',
  'provider',
  'location',
  'opening-hours',
  'phone-number',
  'address',
  'city',
  'state',
  'website',
  'provider-info',
].sort();

const OWN_ATTRIBUTES = ['created', 'modified', 'name', 'description', 'personal', 'connections', 'personality', 'meta-data'].sort();

const DETAIL_ATTRIBUTES = [
  'created',
  'modified',
  'name',
  'description',
  'tasks_supplied',
  'personal',
  'meta_data',
  'place_id',
  'provider',
  'location',
  'opening_hours',
  'phone_number',
  'address',
  'city',
  'state',
  'website',
  'provider_info',
  'tags',
].sort();

const PARIS = [2.3522, 48.8566];

describe('twins: forms, writes, visibility and paging', () => {
  let service: TestApp;
  let alpha: TestTenant;
  let beta: TestTenant;

  const write = (tenant: TestTenant, method: 'POST' | 'PATCH', url: string, data: Record<string, unknown>) =>
    service.inject({ method, url, headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: document(data) });

  const create = async (tenant: TestTenant, attributes: Record<string, unknown>) => {
    const response = await write(tenant, 'POST', '/my/twins/', { type: 'twins', attributes });
    if (response.statusCode !== 201) throw new Error(`create failed: ${response.statusCode} ${response.body}`);
    return response.json().data as { id: string; attributes: Record<string, unknown> };
  };

  const get = (tenant: TestTenant, url: string, headers: Record<string, string> = {}) =>
    service.inject({ method: 'GET', url, headers: { ...tenant.headers(), ...headers } });

  beforeAll(async () => {
    service = await TestApp.start();
    alpha = await service.tenant({ organization: 'Twins Alpha' });
    beta = await service.tenant({ organization: 'Twins Beta' });
  });
  afterAll(() => service.close());

  describe('POST /my/twins/', () => {
    it('creates a twin: 201, detail form with exactly the detail attributes, absolute Location', async () => {
      const response = await write(alpha, 'POST', '/my/twins/', {
        type: 'twins',
        attributes: {
          name: 'River walks',
          description: 'Guided walks',
          public: true,
          personal: true,
          location: { type: 'Point', coordinates: PARIS },
          personality: { characteristics: ['outdoors', 'history'], services: ['tours'] },
          tags: ['family'],
          'meta-data': { category: 'tours', latitude: 48.8566 },
          'opening-hours': { open_now: true, weekday_text: ['Monday: 9:00 AM – 5:00 PM', 'Tuesday: Closed'] },
          'phone-number': '+33 1 23 45 67 89',
          address: '1 Quai de la Tournelle',
          city: 'Paris',
          state: 'IDF',
          website: 'https://example.com',
        },
      });
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      const twin = response.json().data;
      expect(response.headers.location).toMatch(new RegExp(`^http://[^/]+/twins/${twin.id}/$`));
      expect(twin.type).toBe('twins');
      expect(Object.keys(twin.attributes).sort()).toEqual(DETAIL_ATTRIBUTES);
      expect(twin.relationships).toEqual({ organization: { data: { type: 'organizations', id: alpha.organizationId } } });
      expect(twin.attributes).toEqual({
        created: expect.stringMatching(MICROSECOND_TIMESTAMP),
        modified: expect.stringMatching(MICROSECOND_TIMESTAMP),
        name: 'River walks',
        description: 'Guided walks',
        tasks_supplied: 0,
        personal: true,
        meta_data: { category: 'tours', latitude: 48.8566 },
        place_id: '',
        provider: '',
        location: { type: 'Point', coordinates: PARIS },
        opening_hours: ['Monday: 9:00 AM – 5:00 PM', 'Tuesday: Closed'],
        phone_number: '+33 1 23 45 67 89',
        address: '1 Quai de la Tournelle',
        city: 'Paris',
        state: 'IDF',
        website: 'https://example.com',
        provider_info: { photos: [], reviews: [] },
        tags: ['family'],
      });
    });

    it('only name is required; defaults are empty and location null', async () => {
      const twin = await create(alpha, { name: 'Bare' });
      expect(twin.attributes).toEqual(
        expect.objectContaining({ description: '', personal: false, location: null, opening_hours: [], tags: [], meta_data: {}, tasks_supplied: 0 }),
      );
    });

    it.each([
      [{}, '/data/attributes/name'],
      [{ name: '' }, '/data/attributes/name'],
      [{ name: 'x'.repeat(256) }, '/data/attributes/name'],
      [{ name: 42 }, '/data/attributes/name'],
      [{ name: 'a', description: null }, '/data/attributes/description'],
      [{ name: 'a', public: 'yes' }, '/data/attributes/public'],
      [{ name: 'a', phone_number: '1' }, '/data/attributes/phone_number'],
      [{ name: 'a', 'phone-number': 'x'.repeat(65) }, '/data/attributes/phone-number'],
      [{ name: 'a', tags: 'x' }, '/data/attributes/tags'],
      [{ name: 'a', connections: ['not-a-uuid'] }, '/data/attributes/connections'],
      [{ name: 'a', personality: { characteristics: [1] } }, '/data/attributes/personality/characteristics'],
      [{ name: 'a', personality: { id: 'x' } }, '/data/attributes/personality/id'],
      [{ name: 'a', 'meta-data': [] }, '/data/attributes/meta-data'],
      [{ name: 'a', 'opening-hours': { weekday_text: 'Mon' } }, '/data/attributes/opening-hours/weekday_text'],
      [{ name: 'a', location: 'Paris' }, '/data/attributes/location'],
      [{ name: 'a', location: { type: 'LineString', coordinates: [[0, 0], [1, 1]] } }, '/data/attributes/location/type'],
      [{ name: 'a', location: { type: 'Point' } }, '/data/attributes/location/coordinates'],
      [{ name: 'a', location: { type: 'Point', coordinates: [1, 2, 3] } }, '/data/attributes/location/coordinates'],
      [{ name: 'a', location: { type: 'Point', coordinates: [181, 0] } }, '/data/attributes/location/coordinates/0'],
      [{ name: 'a', location: { type: 'Point', coordinates: [-180.5, 0] } }, '/data/attributes/location/coordinates/0'],
      [{ name: 'a', location: { type: 'Point', coordinates: [0, 90.01] } }, '/data/attributes/location/coordinates/1'],
      [{ name: 'a', location: { type: 'Point', coordinates: [0, '45'] } }, '/data/attributes/location/coordinates/1'],
      [{ name: 'a', location: { type: 'Point', coordinates: [0, 0], crs: {} } }, '/data/attributes/location/crs'],
    ])('400 with a pointer for %j', async (attributes, pointer) => {
      const response = await write(alpha, 'POST', '/my/twins/', { type: 'twins', attributes });
      const error = expectError(response, 400);
      expect(response.json().errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toContain(pointer);
      expect(error.code).toBe('invalid_document');
    });

    it('accepts the extreme coordinates', async () => {
      const twin = await create(alpha, { name: 'Corner', location: { type: 'Point', coordinates: [-180, -90] } });
      expect(twin.attributes.location).toEqual({ type: 'Point', coordinates: [-180, -90] });
    });

    it('connections must name twins the caller can see', async () => {
      const hidden = await create(beta, { name: 'Beta private' });
      const response = await write(alpha, 'POST', '/my/twins/', { type: 'twins', attributes: { name: 'c', connections: [alpha.twinId, hidden.id] } });
      expectError(response, 400, { pointer: '/data/attributes/connections/1' });
    });

    it('409 for a wrong type, 409 id_exists for a client id that is taken (offline-ids.e2e-spec.ts: the rest), 415 for another media type', async () => {
      expectError(await write(alpha, 'POST', '/my/twins/', { type: 'quests', attributes: { name: 'x' } }), 409, { pointer: '/data/type' });
      expect(expectError(await write(alpha, 'POST', '/my/twins/', { type: 'twins', id: alpha.twinId, attributes: { name: 'x' } }), 409, { pointer: '/data/id' }).code).toBe('id_exists');
      const response = await service.inject({
        method: 'POST',
        url: '/my/twins/',
        headers: { ...alpha.headers(), 'content-type': 'text/plain' },
        payload: 'x',
      });
      expectError(response, 415);
    });
  });

  describe('PATCH /my/twins/:id/', () => {
    it('changes only the given attributes and answers the detail form', async () => {
      const twin = await create(alpha, { name: 'Patch me', description: 'before', location: { type: 'Point', coordinates: PARIS }, tags: ['a'] });
      const response = await write(alpha, 'PATCH', `/my/twins/${twin.id}/`, {
        type: 'twins',
        id: twin.id,
        attributes: { description: 'after', 'phone-number': '123', personality: { services: ['repairs'] } },
      });
      expect(response.statusCode).toBe(200);
      const patched = response.json().data;
      expect(Object.keys(patched.attributes).sort()).toEqual(DETAIL_ATTRIBUTES);
      expect(patched.attributes).toEqual(
        expect.objectContaining({ name: 'Patch me', description: 'after', phone_number: '123', tags: ['a'], location: { type: 'Point', coordinates: PARIS } }),
      );
      expect(patched.attributes.modified > (twin.attributes.modified as string)).toBe(true);
      expect(patched.attributes.created).toBe(twin.attributes.created);

      // services made it a supplier; the personality id is kept.
      const listed = (await get(alpha, `/twins/?organization=${alpha.organizationId}&is_supplier=true`)).json().data;
      expect(listed.map((t: { id: string }) => t.id)).toContain(twin.id);

      const cleared = await write(alpha, 'PATCH', `/my/twins/${twin.id}`, { type: 'twins', attributes: { location: null } });
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json().data.attributes.location).toBeNull();
    });

    it('validates like create, with pointers', async () => {
      const twin = await create(alpha, { name: 'Validate me' });
      const url = `/my/twins/${twin.id}/`;
      expectError(await write(alpha, 'PATCH', url, { type: 'twins', attributes: { name: '' } }), 400, { pointer: '/data/attributes/name' });
      expectError(await write(alpha, 'PATCH', url, { type: 'twins', attributes: { name: null } }), 400, { pointer: '/data/attributes/name' });
      expectError(await write(alpha, 'PATCH', url, { type: 'twins', attributes: { location: { type: 'Point', coordinates: [10, -91] } } }), 400, {
        pointer: '/data/attributes/location/coordinates/1',
      });
      expectError(await write(alpha, 'PATCH', url, { type: 'twins', attributes: { connections: [twin.id] } }), 400, {
        pointer: '/data/attributes/connections/0',
      });
      expectError(await write(alpha, 'PATCH', url, { type: 'twins', id: alpha.twinId, attributes: {} }), 409, { pointer: '/data/id' });
    });

    it('refuses twins of another organization with 404, even public ones', async () => {
      const foreign = await create(beta, { name: 'Beta public', public: true });
      const response = await write(alpha, 'PATCH', `/my/twins/${foreign.id}/`, { type: 'twins', attributes: { name: 'hijacked' } });
      expectError(response, 404);
      const unchanged = (await get(beta, `/twins/${foreign.id}/`)).json().data;
      expect(unchanged.attributes.name).toBe('Beta public');
      expectError(await write(alpha, 'PATCH', '/my/twins/not-a-uuid/', { type: 'twins', attributes: {} }), 404);
    });
  });

  describe('GET /twins/:id/ and visibility', () => {
    let hidden: { id: string };
    let shown: { id: string };
    let supplier: { id: string };

    beforeAll(async () => {
      hidden = await create(beta, { name: 'Beta hidden' });
      shown = await create(beta, { name: 'Beta shown', public: true });
      supplier = await create(beta, { name: 'Beta supplier', personality: { services: ['bikes'] } });
    });

    it('shows own, public and supplier twins of other organizations; others are 404', async () => {
      expect((await get(alpha, `/twins/${alpha.twinId}/`)).statusCode).toBe(200);
      expect((await get(alpha, `/twins/${shown.id}/`)).statusCode).toBe(200);
      expect((await get(alpha, `/twins/${supplier.id}/`)).statusCode).toBe(200);
      expectError(await get(alpha, `/twins/${hidden.id}/`), 404);
      expectError(await get(alpha, '/twins/00000000-0000-4000-8000-000000000000/'), 404);
      expectError(await get(alpha, '/twins/nope/'), 404);
      expect((await get(beta, `/twins/${hidden.id}`)).statusCode).toBe(200);
    });

    it('the list of alpha holds the visible twins of beta but not the hidden one', async () => {
      const response = await get(alpha, `/twins/?organization=${beta.organizationId}&page_size=100`);
      expect(response.statusCode).toBe(200);
      const ids = response.json().data.map((t: { id: string }) => t.id);
      expect(ids).toEqual(expect.arrayContaining([shown.id, supplier.id]));
      expect(ids).not.toContain(hidden.id);
      expect(ids).not.toContain(beta.twinId);
      const own = (await get(beta, `/twins/?organization=${beta.organizationId}&page_size=100`)).json().data.map((t: { id: string }) => t.id);
      expect(own).toEqual(expect.arrayContaining([shown.id, supplier.id, hidden.id, beta.twinId]));
    });

    it('the unfiltered list (counted from twin_counts, paged from the visibility indexes) pages every visible twin once, in order', async () => {
      // The visibility rule written out here, independently of the service's SQL.
      const expected: { id: string }[] = await service.dataSource.query(
        `SELECT t.id FROM twins t WHERE t.organization_id = $1 OR t.public OR cardinality(t.services) > 0 ORDER BY t.created, t.id`,
        [alpha.organizationId],
      );
      const size = 100;
      const first = (await get(alpha, `/twins/?page_size=${size}`)).json();
      // A number, not the string pg gives for numeric.
      expect(first.meta.pagination).toEqual({ page: 1, pages: Math.max(1, Math.ceil(expected.length / size)), count: expected.length });
      const seen: string[] = first.data.map((t: { id: string }) => t.id);
      for (let page = 2; page <= first.meta.pagination.pages; page++) {
        seen.push(...(await get(alpha, `/twins/?page_size=${size}&page_number=${page}`)).json().data.map((t: { id: string }) => t.id));
      }
      expect(seen).toEqual(expected.map((row) => row.id));
      expect(seen).toEqual(expect.arrayContaining([alpha.twinId, shown.id, supplier.id]));
      expect(seen).not.toContain(hidden.id);
    });

    it('GET /my/twins/ lists only the organization\'s twins, in the own-twins form', async () => {
      const response = await get(alpha, '/my/twins/?page_size=100');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      for (const twin of body.data) {
        expect(Object.keys(twin.attributes).sort()).toEqual(OWN_ATTRIBUTES);
        expect(twin.relationships.organization.data).toEqual({ type: 'organizations', id: alpha.organizationId });
      }
      expect(body.data.map((t: { id: string }) => t.id)).toContain(alpha.twinId);
      expect(body.data.map((t: { id: string }) => t.id)).not.toContain(shown.id);
      expect(body.meta.pagination.count).toBe(body.data.length);
      expect(Object.keys(body.links).sort()).toEqual(['first', 'last', 'next', 'prev']);
    });
  });

  describe('list form and paging', () => {
    let paged: TestTenant;
    let ids: string[];

    beforeAll(async () => {
      paged = await service.tenant({ organization: 'Twins Paging' });
      ids = [paged.twinId];
      for (let i = 0; i < 4; i++) ids.push((await create(paged, { name: `Paged ${i}` })).id);
    });

    it('list items carry exactly the dasherized list attributes', async () => {
      const twin = await create(paged, {
        name: 'Full',
        location: { type: 'Point', coordinates: PARIS },
        personality: { characteristics: ['c1'], services: [] },
        'opening-hours': { weekday_text: ['Mon'] },
      });
      ids.push(twin.id);
      const response = await get(paged, `/twins/?organization=${paged.organizationId}&page_size=100`);
      const item = response.json().data.find((t: { id: string }) => t.id === twin.id);
      expect(Object.keys(item).sort()).toEqual(['attributes', 'id', 'relationships', 'type']);
      expect(Object.keys(item.attributes).sort()).toEqual(LIST_ATTRIBUTES);
      expect(item.attributes).toEqual(
        expect.objectContaining({
          created: expect.stringMatching(MICROSECOND_TIMESTAMP),
          personality: { id: expect.any(String), characteristics: ['c1'], services: [] },
          location: { type: 'Point', coordinates: PARIS },
          'opening-hours': { weekday_text: ['Mon'] },
          'provider-info': { photos: [], reviews: [] },
          'place-id': '',
          connections: [],
        }),
      );
      expect(item.relationships).toEqual({ organization: { data: { type: 'organizations', id: paged.organizationId } } });
    });

    it('pages in created order with absolute links that keep the filters, and 404 past the end', async () => {
      const base = `/twins/?organization=${paged.organizationId}&page_size=2`;
      const first = await get(paged, base);
      expect(first.statusCode).toBe(200);
      const body = first.json();
      expect(body.meta).toEqual({ pagination: { page: 1, pages: 3, count: 6 } });
      expect(body.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(0, 2));
      const link = (n: number) => expect.stringMatching(new RegExp(`^http://[^/]+/twins/\\?organization=${paged.organizationId}&page_size=2&page_number=${n}$`));
      expect(body.links).toEqual({ first: link(1), last: link(3), next: link(2), prev: null });

      const last = (await get(paged, `${base}&page_number=3`)).json();
      expect(last.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(4, 6));
      expect(last.links.next).toBeNull();
      expect(last.links.prev).toEqual(link(2));

      expectError(await get(paged, `${base}&page_number=4`), 404);
      const own = (await get(paged, '/my/twins/?page_size=5&page_number=2')).json();
      expect(own.meta.pagination).toEqual({ page: 2, pages: 2, count: 6 });
      expect(own.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(5));
      expectError(await get(paged, '/my/twins/?page_size=5&page_number=3'), 404);
    });

    it.each([['page_size=0', 'page_size'], ['page_size=101', 'page_size'], ['page_number=x', 'page_number'], ['colour=red', 'colour']])(
      '400 for %s',
      async (query, parameter) => {
        expectError(await get(paged, `/twins/?${query}`), 400, { parameter });
        expectError(await get(paged, `/my/twins/?${query}`), 400, { parameter });
      },
    );

    it('/my/twins/ refuses the filters of /twins/ other than the spatial ones', async () => {
      expectError(await get(paged, '/my/twins/?is_public=true'), 400, { parameter: 'is_public' });
      expect((await get(paged, '/my/twins/?in_bbox=2,48,3,49')).json().data.map((t: { id: string }) => t.id)).toEqual([ids[5]]);
    });
  });

  it('the OpenAPI document describes every twin route and filter', async () => {
    const spec = (await service.inject({ method: 'GET', url: '/docs-json' })).json();
    const list = spec.paths['/twins'].get;
    const names = list.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'is_public',
        'is_personal',
        'personality',
        'characteristics',
        'organization',
        'is_connection',
        'is_supplier',
        'in_bbox',
        'point',
        'dist',
        'ordering',
        'page_number',
        'page_size',
      ]),
    );
    expect(Object.keys(list.responses['200'].content).sort()).toEqual(['application/geo+json', 'application/vnd.api+json']);
    expect(spec.paths['/my/twins'].get).toBeDefined();
    expect(spec.paths['/my/twins'].post.responses['201']).toBeDefined();
    expect(spec.paths['/my/twins/{id}'].patch).toBeDefined();
    expect(spec.paths['/twins/{id}'].get).toBeDefined();
  });
});
