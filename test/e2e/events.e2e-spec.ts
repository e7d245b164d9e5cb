import type { LightMyRequestResponse } from 'fastify';
import { UUID_V7 } from '../../src/events/uuidv7';
import { document, embeddedDatabase, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

/** Timeline events (docs/API.md, section 14): ingestion, idempotency, edits, reading, tenancy. */
describe('events: the X-Twin timeline', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  /** A second twin of `tenant`'s organization. */
  let sibling: string;

  beforeAll(async () => {
    service = await TestApp.start({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres' });
    tenant = await service.tenant({ organization: 'Events org', twin: 'Walker' });
    other = await service.tenant({ organization: 'Other org', twin: 'Stranger' });
    sibling = await addTwin(tenant.organizationId, 'Sibling');
  });
  afterAll(() => service.close());

  async function addTwin(organizationId: string, name: string): Promise<string> {
    const rows: { id: string }[] = await service.dataSource.query(`INSERT INTO twins (organization_id, name) VALUES ($1, $2) RETURNING id`, [organizationId, name]);
    return rows[0].id;
  }

  const headers = (who: TestTenant, extra: Record<string, string> = {}, twin: string | boolean = true) => ({
    ...who.headers({ twin }),
    'content-type': JSON_API,
    ...extra,
  });

  const post = (attributes: Record<string, unknown>, extra: Record<string, string> = {}, who = tenant, twin: string | boolean = true) =>
    service.inject({ method: 'POST', url: '/events/', headers: headers(who, extra, twin), payload: document({ type: 'events', attributes }) });

  async function create(attributes: Record<string, unknown> = {}, twin: string | boolean = true): Promise<{ id: string; attributes: Record<string, unknown> }> {
    const response = await post({ name: 'walk', category: 'activity', data: { steps: 1 }, ...attributes }, {}, tenant, twin);
    expect(response.statusCode).toBe(201);
    return response.json().data;
  }

  const countEvents = async (twinId: string): Promise<number> => {
    const rows: { count: number }[] = await service.dataSource.query(`SELECT count(*) AS count FROM events WHERE twin_id = $1`, [twinId]);
    return rows[0].count;
  };

  describe('POST /events/', () => {
    it('201 with the event, a UUIDv7 id, a microsecond timestamp and an absolute Location', async () => {
      const response = await post({ name: 'walk', category: 'activity', data: { steps: 4200, route: { km: 3.2 }, tags: ['a'] } });
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      const body = response.json();
      expect(body).toEqual({
        data: {
          type: 'events',
          id: expect.stringMatching(UUID_V7),
          attributes: { name: 'walk', category: 'activity', data: { steps: 4200, route: { km: 3.2 }, tags: ['a'] }, timestamp: expect.stringMatching(MICROSECOND_TIMESTAMP), occurred: null },
        },
      });
      expect(response.headers.location).toBe(`http://localhost/events/${body.data.id}`);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      const stored = await service.dataSource.query(`SELECT organization_id, twin_id FROM events WHERE id = $1`, [body.data.id]);
      expect(stored).toEqual([{ organization_id: tenant.organizationId, twin_id: tenant.twinId }]);
      // The Location answers.
      const fetched = await service.inject({ method: 'GET', url: `/events/${body.data.id}`, headers: tenant.headers({ twin: true }) });
      expect(fetched.statusCode).toBe(200);
      expect(fetched.json()).toEqual(body);
    });

    it('keeps PostgreSQL microseconds, and ids sort like creation order', async () => {
      const first = await create();
      const second = await create();
      expect(second.id > first.id).toBe(true);
      const rows: { micros: string }[] = await service.dataSource.query(`SELECT to_char("timestamp", 'US') AS micros FROM events WHERE id = $1`, [second.id]);
      expect((second.attributes.timestamp as string).slice(20, 26)).toBe(rows[0].micros);
      expect(second.attributes.timestamp as string >= (first.attributes.timestamp as string)).toBe(true);
    });

    it('accepts an empty data object and unicode', async () => {
      const response = await post({ name: 'é 🚶', category: 'ü', data: {} });
      expect(response.statusCode).toBe(201);
      expect(response.json().data.attributes).toEqual(expect.objectContaining({ name: 'é 🚶', category: 'ü', data: {} }));
    });

    it.each([
      ['name missing', { category: 'c', data: {} }, '/data/attributes/name'],
      ['name empty', { name: '', category: 'c', data: {} }, '/data/attributes/name'],
      ['name too long', { name: 'x'.repeat(256), category: 'c', data: {} }, '/data/attributes/name'],
      ['name not a string', { name: 5, category: 'c', data: {} }, '/data/attributes/name'],
      ['category missing', { name: 'n', data: {} }, '/data/attributes/category'],
      ['category too long', { name: 'n', category: 'x'.repeat(256), data: {} }, '/data/attributes/category'],
      ['data missing', { name: 'n', category: 'c' }, '/data/attributes/data'],
      ['data an array', { name: 'n', category: 'c', data: [1] }, '/data/attributes/data'],
      ['data a string', { name: 'n', category: 'c', data: 'x' }, '/data/attributes/data'],
      ['data null', { name: 'n', category: 'c', data: null }, '/data/attributes/data'],
      ['unknown attribute', { name: 'n', category: 'c', data: {}, timestamp: '2026-01-01T00:00:00Z' }, '/data/attributes/timestamp'],
    ])('400 with a pointer when %s', async (_, attributes, pointer) => {
      const response = await post(attributes);
      expectError(response, 400, { pointer });
    });

    it('accepts 255-character name and category', async () => {
      const response = await post({ name: 'n'.repeat(255), category: 'c'.repeat(255), data: {} });
      expect(response.statusCode).toBe(201);
    });

    it('data of exactly 64 KiB serialised is accepted; one byte more is a 400 on /data/attributes/data', async () => {
      const exact = { blob: 'x'.repeat(65536 - '{"blob":""}'.length) };
      expect(Buffer.byteLength(JSON.stringify(exact))).toBe(65536);
      const ok = await post({ name: 'big', category: 'c', data: exact });
      expect(ok.statusCode).toBe(201);
      const over = { blob: 'x'.repeat(65537 - '{"blob":""}'.length) };
      const response = await post({ name: 'big', category: 'c', data: over });
      const error = expectError(response, 400, { pointer: '/data/attributes/data' });
      expect(error.detail).toMatch(/65536 bytes/);
      // Multi-byte characters count as bytes.
      const wide = await post({ name: 'big', category: 'c', data: { blob: 'é'.repeat(33000) } });
      expectError(wide, 400, { pointer: '/data/attributes/data' });
    });

    it('409 for another type, 400 for a client-generated id that is not a UUID (offline-ids.e2e-spec.ts: the rest), 400 without data', async () => {
      expectError(await service.inject({ method: 'POST', url: '/events/', headers: headers(tenant), payload: document({ type: 'twins', attributes: { name: 'n', category: 'c', data: {} } }) }), 409, {
        pointer: '/data/type',
      });
      expectError(
        await service.inject({ method: 'POST', url: '/events/', headers: headers(tenant), payload: document({ type: 'events', id: 'event-1', attributes: { name: 'n', category: 'c', data: {} } }) }),
        400,
        { pointer: '/data/id' },
      );
      expectError(await service.inject({ method: 'POST', url: '/events/', headers: headers(tenant), payload: '{}' }), 400, { pointer: '/data' });
    });

    it('415 for another media type, 400 for invalid JSON, 413 over the body limit', async () => {
      const wrongType = await service.inject({ method: 'POST', url: '/events/', headers: { ...headers(tenant), 'content-type': 'text/plain' }, payload: 'x' });
      expectError(wrongType, 415);
      expectError(await service.inject({ method: 'POST', url: '/events/', headers: headers(tenant), payload: '{"data":' }), 400);
      const huge = await post({ name: 'n', category: 'c', data: { blob: 'x'.repeat(1024 * 1024 + 10) } });
      expectError(huge, 413);
    });
  });

  describe('tenant headers', () => {
    it('401 without a token, 400 without X-Organization or X-Twin, 403 for a twin of another organization', async () => {
      const attributes = { name: 'n', category: 'c', data: {} };
      const payload = document({ type: 'events', attributes });
      const noToken = await service.inject({ method: 'POST', url: '/events/', headers: { 'content-type': JSON_API }, payload });
      expectError(noToken, 401);
      const noOrg = await service.inject({ method: 'POST', url: '/events/', headers: { authorization: `Token ${tenant.token}`, 'x-twin': tenant.twinId, 'content-type': JSON_API }, payload });
      expectError(noOrg, 400, { header: 'X-Organization' });
      expectError(await post(attributes, {}, tenant, false), 400, { header: 'X-Twin' });
      expectError(await post(attributes, {}, tenant, other.twinId), 403, { header: 'X-Twin' });
      const list = await service.inject({ method: 'GET', url: '/events/', headers: tenant.headers({ twin: other.twinId }) });
      expectError(list, 403, { header: 'X-Twin' });
      const stream = await service.inject({ method: 'GET', url: '/events/stream', headers: tenant.headers() });
      expectError(stream, 400, { header: 'X-Twin' });
    });

    it("another organization's token cannot reach the event, even naming its organization", async () => {
      const event = await create();
      const foreign = await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: other.headers({ twin: true }) });
      expectError(foreign, 404);
      const spoofed = await service.inject({
        method: 'GET',
        url: `/events/${event.id}`,
        headers: { authorization: `Token ${other.token}`, 'x-organization': tenant.organizationId, 'x-twin': tenant.twinId },
      });
      expectError(spoofed, 403, { header: 'X-Organization' });
      const patch = await service.inject({
        method: 'PATCH',
        url: `/events/${event.id}`,
        headers: headers(other),
        payload: document({ type: 'events', id: event.id, attributes: { name: 'stolen' } }),
      });
      expectError(patch, 404);
      expectError(await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: other.headers({ twin: true }) }), 404);
      const list = await service.inject({ method: 'GET', url: '/events/', headers: other.headers({ twin: true }) });
      expect(list.json().data.map((e: { id: string }) => e.id)).not.toContain(event.id);
    });

    it('another twin of the same organization sees a different timeline: 404 on the event', async () => {
      const event = await create();
      const asSibling = { ...tenant.headers({ twin: sibling }) };
      expectError(await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: asSibling }), 404);
      expectError(
        await service.inject({ method: 'PATCH', url: `/events/${event.id}`, headers: { ...asSibling, 'content-type': JSON_API }, payload: document({ type: 'events', id: event.id, attributes: { name: 'x' } }) }),
        404,
      );
      expectError(await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: asSibling }), 404);
      const list = await service.inject({ method: 'GET', url: '/events/', headers: asSibling });
      expect(list.json().data.map((e: { id: string }) => e.id)).not.toContain(event.id);
      // Still there for its own twin.
      expect((await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) })).statusCode).toBe(200);
    });
  });

  describe('Idempotency-Key', () => {
    const attributes = { name: 'purchase', category: 'shop', data: { amount: 12.5, items: ['a', 'b'] } };

    it('a sequential retry answers the first answer and stores nothing new', async () => {
      const key = `seq-${Date.now()}`;
      const first = await post(attributes, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const before = await countEvents(tenant.twinId);
      // Same attributes in another key order and whitespace: the same request.
      const retry = await service.inject({
        method: 'POST',
        url: '/events/',
        headers: headers(tenant, { 'idempotency-key': key }),
        payload: `{ "data": { "attributes": { "data": { "items": ["a","b"], "amount": 12.5 }, "category": "shop", "name": "purchase" }, "type": "events" } }`,
      });
      expect(retry.statusCode).toBe(201);
      expect(retry.json()).toEqual(first.json());
      expect(retry.headers.location).toBe(first.headers.location);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(await countEvents(tenant.twinId)).toBe(before);
    });

    it('the same key with a different body is a 422 naming the header', async () => {
      const key = `diff-${Date.now()}`;
      expect((await post(attributes, { 'idempotency-key': key })).statusCode).toBe(201);
      const before = await countEvents(tenant.twinId);
      const response = await post({ ...attributes, data: { amount: 13 } }, { 'idempotency-key': key });
      const error = expectError(response, 422, { header: 'Idempotency-Key' });
      expect(error.code).toBe('idempotency_key_reused');
      expect(await countEvents(tenant.twinId)).toBe(before);
    });

    it('concurrent retries with one key make one event and give every caller the same id', async () => {
      const key = `race-${Date.now()}`;
      const before = await countEvents(tenant.twinId);
      const responses = await Promise.all(Array.from({ length: 8 }, () => post(attributes, { 'idempotency-key': key })));
      for (const response of responses) expect(response.statusCode).toBe(201);
      const ids = new Set(responses.map((response) => response.json().data.id));
      expect(ids.size).toBe(1);
      expect(await countEvents(tenant.twinId)).toBe(before + 1);
      expect(responses.filter((response) => response.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    });

    it('keys are scoped to the twin: the same key on another twin is another event', async () => {
      const key = `scope-${Date.now()}`;
      const mine = await post(attributes, { 'idempotency-key': key });
      const theirs = await post(attributes, { 'idempotency-key': key }, other);
      const siblings = await post(attributes, { 'idempotency-key': key }, tenant, sibling);
      expect([mine.statusCode, theirs.statusCode, siblings.statusCode]).toEqual([201, 201, 201]);
      expect(new Set([mine.json().data.id, theirs.json().data.id, siblings.json().data.id]).size).toBe(3);
    });

    it('a key older than the retention is taken over by a new request', async () => {
      const key = `old-${Date.now()}`;
      const first = await post(attributes, { 'idempotency-key': key });
      await service.dataSource.query(`UPDATE idempotency_keys SET created = now() - interval '25 hours' WHERE twin_id = $1 AND key = $2`, [tenant.twinId, key]);
      const later = await post({ ...attributes, name: 'other' }, { 'idempotency-key': key });
      expect(later.statusCode).toBe(201);
      expect(later.json().data.id).not.toBe(first.json().data.id);
    });

    it('a failed request does not use up its key', async () => {
      const key = `failed-${Date.now()}`;
      expectError(await post({ name: '', category: 'c', data: {} }, { 'idempotency-key': key }), 400);
      expect((await post(attributes, { 'idempotency-key': key })).statusCode).toBe(201);
    });

    it.each([['x'.repeat(256)], ['tab\tkey'], ['   ']])('400 naming the header for a malformed key %j', async (key) => {
      expectError(await post(attributes, { 'idempotency-key': key }), 400, { header: 'Idempotency-Key' });
    });
  });

  describe('PATCH /events/:id', () => {
    const patch = (id: string, data: Record<string, unknown>, who = tenant) =>
      service.inject({ method: 'PATCH', url: `/events/${id}`, headers: headers(who), payload: document(data) });

    it('merges data keys: values replace, null removes, other keys are kept; 200 with the event', async () => {
      const event = await create({ data: { a: 1, b: 2, c: { deep: true }, keepNull: null } });
      const response = await patch(event.id, { type: 'events', id: event.id, attributes: { data: { a: 10, b: null, d: 'new', c: { other: 1 } } } });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.data).toEqual({
        type: 'events',
        id: event.id,
        attributes: { name: 'walk', category: 'activity', data: { a: 10, c: { other: 1 }, d: 'new', keepNull: null }, timestamp: event.attributes.timestamp, occurred: null },
      });
      const fetched = await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) });
      expect(fetched.json()).toEqual(body);
      // Removing a key that is not there is not an error.
      const again = await patch(event.id, { type: 'events', id: event.id, attributes: { data: { nope: null } } });
      expect(again.json().data.attributes.data).toEqual({ a: 10, c: { other: 1 }, d: 'new', keepNull: null });
    });

    it('changes name and category and keeps data when no data is sent', async () => {
      const event = await create({ data: { x: 1 } });
      const response = await patch(event.id, { type: 'events', id: event.id, attributes: { name: 'run', category: 'sport' } });
      expect(response.statusCode).toBe(200);
      expect(response.json().data.attributes).toEqual({ name: 'run', category: 'sport', data: { x: 1 }, timestamp: event.attributes.timestamp, occurred: null });
    });

    it('the contract body (attributes.data only) works', async () => {
      const event = await create({ data: { x: 1 } });
      const response = await patch(event.id, { type: 'events', id: event.id, attributes: { data: { y: 2 } } });
      expect(response.json().data.attributes.data).toEqual({ x: 1, y: 2 });
    });

    it('409 when data.id differs from the URL; 400 when it is missing', async () => {
      const event = await create();
      const otherEvent = await create();
      const mismatch = await patch(event.id, { type: 'events', id: otherEvent.id, attributes: { name: 'x' } });
      const error = expectError(mismatch, 409, { pointer: '/data/id' });
      expect(error.code).toBe('id_mismatch');
      expectError(await patch(event.id, { type: 'events', attributes: { name: 'x' } }), 400, { pointer: '/data/id' });
      expectError(await patch(event.id, { type: 'twins', id: event.id, attributes: {} }), 409, { pointer: '/data/type' });
      // The id comparison ignores case.
      expect((await patch(event.id, { type: 'events', id: event.id.toUpperCase(), attributes: { name: 'ok' } })).statusCode).toBe(200);
    });

    it.each([
      ['name null', { name: null }, '/data/attributes/name'],
      ['name empty', { name: '' }, '/data/attributes/name'],
      ['category too long', { category: 'x'.repeat(256) }, '/data/attributes/category'],
      ['data null', { data: null }, '/data/attributes/data'],
      ['data an array', { data: [] }, '/data/attributes/data'],
      ['timestamp', { timestamp: '2020-01-01T00:00:00Z' }, '/data/attributes/timestamp'],
    ])('400 with a pointer for %s', async (_, attributes, pointer) => {
      const event = await create();
      expectError(await patch(event.id, { type: 'events', id: event.id, attributes }), 400, { pointer });
    });

    it('400 when the merged data would exceed 64 KiB, and nothing changes', async () => {
      const event = await create({ data: { a: 'x'.repeat(40_000) } });
      const response = await patch(event.id, { type: 'events', id: event.id, attributes: { name: 'changed', data: { b: 'y'.repeat(30_000) } } });
      expectError(response, 400, { pointer: '/data/attributes/data' });
      const fetched = await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) });
      expect(fetched.json().data.attributes.name).toBe('walk');
      expect(Object.keys(fetched.json().data.attributes.data)).toEqual(['a']);
      // Replacing the big key instead fits.
      const ok = await patch(event.id, { type: 'events', id: event.id, attributes: { data: { a: null, b: 'y'.repeat(30_000) } } });
      expect(ok.statusCode).toBe(200);
    });

    it('404 for an unknown or malformed id', async () => {
      const unknown = '0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10';
      expectError(await patch(unknown, { type: 'events', id: unknown, attributes: { name: 'x' } }), 404);
      expectError(await patch('nope', { type: 'events', id: 'nope', attributes: { name: 'x' } }), 404);
    });
  });

  describe('DELETE /events/:id', () => {
    it('204 without a body; afterwards 404', async () => {
      const event = await create();
      const response = await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectError(await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) }), 404);
      expectError(await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) }), 404);
    });

    it("204 with the contract's body", async () => {
      const event = await create();
      const response = await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: headers(tenant), payload: document({ type: 'events', id: event.id }) });
      expect(response.statusCode).toBe(204);
    });

    it('409 when the body names another id or type, and the event stays', async () => {
      const event = await create();
      const mismatch = await service.inject({
        method: 'DELETE',
        url: `/events/${event.id}`,
        headers: headers(tenant),
        payload: document({ type: 'events', id: '0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10' }),
      });
      expectError(mismatch, 409, { pointer: '/data/id' });
      const wrongType = await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: headers(tenant), payload: document({ type: 'twins', id: event.id }) });
      expectError(wrongType, 409, { pointer: '/data/type' });
      expect((await service.inject({ method: 'GET', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) })).statusCode).toBe(200);
    });

    it('404 for a malformed id', async () => {
      expectError(await service.inject({ method: 'DELETE', url: '/events/nope', headers: tenant.headers({ twin: true }) }), 404);
    });
  });

  describe('GET /events/', () => {
    let walker: TestTenant;
    let ids: string[];

    beforeAll(async () => {
      walker = await service.tenant({ organization: 'Timeline org' });
      ids = [];
      for (let i = 0; i < 7; i++) {
        const response = await post({ name: i % 2 === 0 ? 'even' : 'odd', category: i < 4 ? 'early' : 'late', data: { i } }, {}, walker);
        ids.push(response.json().data.id);
      }
    });

    const list = (query = '') => service.inject({ method: 'GET', url: `/events/${query}`, headers: walker.headers({ twin: true }) });

    it('newest first, with the pagination envelope', async () => {
      const response = await list();
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.data.map((e: { id: string }) => e.id)).toEqual([...ids].reverse());
      expect(body.meta).toEqual({ pagination: { page: 1, pages: 1, count: 7 } });
      expect(body.links).toEqual({ first: 'http://localhost/events/?page_number=1', last: 'http://localhost/events/?page_number=1', next: null, prev: null });
      for (const event of body.data) {
        expect(event).toEqual({ type: 'events', id: expect.stringMatching(UUID_V7), attributes: { name: expect.any(String), category: expect.any(String), data: expect.any(Object), timestamp: expect.stringMatching(MICROSECOND_TIMESTAMP), occurred: null } });
      }
    });

    it('pages keep the filters; a page past the end is 404', async () => {
      const page2 = await list('?category=early&page_size=3&page_number=2');
      expect(page2.statusCode).toBe(200);
      const body = page2.json();
      expect(body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
      expect(body.meta).toEqual({ pagination: { page: 2, pages: 2, count: 4 } });
      expect(body.links.prev).toBe('http://localhost/events/?category=early&page_size=3&page_number=1');
      expect(body.links.next).toBeNull();
      expectError(await list('?page_number=4&page_size=3'), 404);
      const first = await list('?page_size=2');
      expect(first.json().data.map((e: { id: string }) => e.id)).toEqual([ids[6], ids[5]]);
    });

    it('filters by name and category', async () => {
      const byName = await list('?name=odd');
      expect(byName.json().data.map((e: { id: string }) => e.id)).toEqual([ids[5], ids[3], ids[1]]);
      const both = await list('?name=even&category=late');
      expect(both.json().data.map((e: { id: string }) => e.id)).toEqual([ids[6], ids[4]]);
      expect((await list('?name=nothing')).json().meta.pagination.count).toBe(0);
    });

    it('filters by since (inclusive) and until (exclusive) at microsecond precision', async () => {
      // Spread the stored timestamps so the bounds are unambiguous.
      for (let i = 0; i < ids.length; i++) {
        await service.dataSource.query(`UPDATE events SET "timestamp" = '2026-01-01T00:00:00.000001Z'::timestamptz + make_interval(mins => $2) WHERE id = $1`, [ids[i], i]);
      }
      const since = await list(`?since=${encodeURIComponent('2026-01-01T00:05:00.000001Z')}`);
      expect(since.json().data.map((e: { id: string }) => e.id)).toEqual([ids[6], ids[5]]);
      const until = await list(`?until=${encodeURIComponent('2026-01-01T00:02:00.000001Z')}`);
      expect(until.json().data.map((e: { id: string }) => e.id)).toEqual([ids[1], ids[0]]);
      const window = await list(`?since=2026-01-01T00:02:00Z&until=2026-01-01T00:04:00.000002Z`);
      expect(window.json().data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3], ids[2]]);
      expect(window.json().data[0].attributes.timestamp).toBe('2026-01-01T00:04:00.000001Z');
    });

    it('400 naming the parameter for unknown or malformed filters', async () => {
      expectError(await list('?since=yesterday'), 400, { parameter: 'since' });
      expectError(await list('?until=2026-13-01'), 400, { parameter: 'until' });
      expectError(await list('?name='), 400, { parameter: 'name' });
      expectError(await list('?order=timestamp'), 400, { parameter: 'order' });
      expectError(await list('?sort=name'), 400, { parameter: 'sort' });
      expectError(await list('?page_size=101'), 400, { parameter: 'page_size' });
    });

    it('the timeline read can be served in order by the (twin, timestamp) index', async () => {
      // Tiny test tables make any plan cheap; forbidding scans and sorts shows an index gives this order.
      await service.dataSource.transaction(async (manager) => {
        await manager.query('SET LOCAL enable_seqscan = off');
        await manager.query('SET LOCAL enable_sort = off');
        const plan: { 'QUERY PLAN': string }[] = await manager.query(
          `EXPLAIN SELECT id FROM events e WHERE e.twin_id = $1 AND e.organization_id = $2 ORDER BY e."timestamp" DESC, e.id DESC LIMIT 50`,
          [walker.twinId, walker.organizationId],
        );
        expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan using events_timeline_idx/);
      });
    });
  });

  describe('GET /events/:id', () => {
    it('404 for unknown and malformed ids', async () => {
      expectError(await service.inject({ method: 'GET', url: '/events/0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10', headers: tenant.headers({ twin: true }) }), 404);
      expectError(await service.inject({ method: 'GET', url: '/events/not-an-id', headers: tenant.headers({ twin: true }) }), 404);
    });

    it('405 with Allow for an unsupported method', async () => {
      const response: LightMyRequestResponse = await service.inject({ method: 'PUT', url: '/events/0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10', headers: tenant.headers({ twin: true }) });
      expectError(response, 405);
      expect(response.headers.allow).toBe('GET, PATCH, DELETE');
    });
  });

  describe('lifecycle', () => {
    it('deleting the twin deletes its events and idempotency keys', async () => {
      const doomed = await addTwin(tenant.organizationId, 'Doomed');
      const response = await post({ name: 'n', category: 'c', data: {} }, { 'idempotency-key': 'k' }, tenant, doomed);
      expect(response.statusCode).toBe(201);
      await service.dataSource.query(`DELETE FROM twins WHERE id = $1`, [doomed]);
      expect(await countEvents(doomed)).toBe(0);
      expect(await service.dataSource.query(`SELECT 1 FROM idempotency_keys WHERE twin_id = $1`, [doomed])).toEqual([]);
    });

    it('the OpenAPI document describes every events route with the X-Twin requirement', async () => {
      const spec = (await service.inject({ method: 'GET', url: '/docs-json' })).json();
      for (const [path, method] of [
        ['/events', 'post'],
        ['/events', 'get'],
        ['/events/stream', 'get'],
        ['/events/{id}', 'get'],
        ['/events/{id}', 'patch'],
        ['/events/{id}', 'delete'],
      ]) {
        const operation = spec.paths[path][method];
        expect(operation.security).toEqual([{ Token: [], Organization: [], Twin: [] }]);
        expect(operation.responses['403']).toBeDefined();
      }
      expect(Object.keys(spec.paths['/events/stream'].get.responses['200'].content)).toEqual(['text/event-stream']);
      expect(spec.paths['/events'].post.responses['422']).toBeDefined();
    });
  });
});
