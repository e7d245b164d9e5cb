import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { document, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

/**
 * Apps that work offline: client-generated ids on `POST /events/` and `POST /my/twins/` (a UUID; taken →
 * 409, anything else → 400, nothing stored either way) and the events' `occurred` attribute (the
 * device's time, any offset, at most microseconds, answered in UTC).
 */
describe('offline apps: client-generated ids and occurred', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Offline org', twin: 'Phone' });
    other = await service.tenant({ organization: 'Other offline org', twin: 'Other phone' });
  });
  afterAll(() => service.close());

  const postEvent = (data: Record<string, unknown>, who = tenant, extra: Record<string, string> = {}) =>
    service.inject({ method: 'POST', url: '/events/', headers: { ...who.headers({ twin: true }), 'content-type': JSON_API, ...extra }, payload: document({ type: 'events', ...data }) });
  const getEvent = (id: string, who = tenant) => service.inject({ method: 'GET', url: `/events/${id}`, headers: who.headers({ twin: true }) });
  const patchEvent = (id: string, attributes: Record<string, unknown>) =>
    service.inject({ method: 'PATCH', url: `/events/${id}`, headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API }, payload: document({ type: 'events', id, attributes }) });
  const walk = (extra: Record<string, unknown> = {}) => ({ name: 'walk', category: 'activity', data: { steps: 1 }, ...extra });
  const count = async (table: 'events' | 'twins', id: string): Promise<number> =>
    Number((await service.dataSource.query(`SELECT count(*) AS n FROM ${table} WHERE id = $1`, [id]))[0].n);
  const eventsOf = async (who: TestTenant): Promise<number> =>
    Number((await service.dataSource.query(`SELECT count(*) AS n FROM events WHERE twin_id = $1`, [who.twinId]))[0].n);

  describe('POST /events/ with data.id', () => {
    it('stores the event under the client\'s id (lowercased), answers it with its Location, occurred null when not sent', async () => {
      const id = randomUUID();
      const response = await postEvent({ id: id.toUpperCase(), attributes: walk() });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        data: { type: 'events', id, attributes: { name: 'walk', category: 'activity', data: { steps: 1 }, timestamp: expect.stringMatching(MICROSECOND_TIMESTAMP), occurred: null } },
      });
      expect(response.headers.location).toBe(`http://localhost/events/${id}`);
      expect((await getEvent(id)).json().data).toEqual(response.json().data);
    });

    it('an id that is taken is a 409 id_exists on /data/id, on any timeline, and changes nothing', async () => {
      const id = randomUUID();
      expect((await postEvent({ id, attributes: walk({ name: 'first' }) })).statusCode).toBe(201);
      const before = { mine: await eventsOf(tenant), theirs: await eventsOf(other) };
      const again = await postEvent({ id, attributes: walk({ name: 'second' }) });
      expect(expectError(again, 409, { pointer: '/data/id' }).code).toBe('id_exists');
      // Another organization's twin cannot reuse it either (ids are global), and learns nothing else.
      expect(expectError(await postEvent({ id, attributes: walk({ name: 'theirs' }) }, other), 409, { pointer: '/data/id' }).code).toBe('id_exists');
      expect({ mine: await eventsOf(tenant), theirs: await eventsOf(other) }).toEqual(before);
      expect((await getEvent(id)).json().data.attributes.name).toBe('first');
    });

    it('an id that is not a UUID is a 400 on /data/id, and nothing is stored', async () => {
      const before = await eventsOf(tenant);
      for (const id of ['walk-1', '', 42, null, '0190a6f2-0000-7000-8000-00000000000', `{${randomUUID()}}`]) {
        const response = await postEvent({ id, attributes: walk() });
        expectError(response, 400, { pointer: '/data/id' });
      }
      expect(await eventsOf(tenant)).toBe(before);
    });

    it('Idempotency-Key: a retry with the same id replays the first answer; the same key with another id is a 422', async () => {
      const id = randomUUID();
      const key = `offline-${randomUUID()}`;
      const first = await postEvent({ id, attributes: walk() }, tenant, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const retry = await postEvent({ id, attributes: walk() }, tenant, { 'idempotency-key': key });
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.json()).toEqual(first.json());
      const otherId = await postEvent({ id: randomUUID(), attributes: walk() }, tenant, { 'idempotency-key': key });
      expect(expectError(otherId, 422, { header: 'Idempotency-Key' }).code).toBe('idempotency_key_reused');
      expect(await count('events', id)).toBe(1);
    });
  });

  describe('occurred', () => {
    it('keeps the device\'s time: any offset, up to microseconds, answered in UTC with six digits; timestamp stays the receipt time', async () => {
      const response = await postEvent({ attributes: walk({ occurred: '2026-11-21T18:02:41.5+01:00' }) });
      expect(response.statusCode).toBe(201);
      const event = response.json().data;
      expect(event.attributes.occurred).toBe('2026-11-21T17:02:41.500000Z');
      expect(event.attributes.timestamp).not.toBe(event.attributes.occurred);
      expect((await getEvent(event.id)).json().data.attributes.occurred).toBe('2026-11-21T17:02:41.500000Z');
      const page = await service.inject({ method: 'GET', url: `/events/?page_size=100`, headers: tenant.headers({ twin: true }) });
      expect(page.json().data.find((item: { id: string }) => item.id === event.id).attributes.occurred).toBe('2026-11-21T17:02:41.500000Z');
    });

    it('PATCH sets it, null clears it, leaving it out keeps it', async () => {
      const { id } = (await postEvent({ attributes: walk() })).json().data;
      expect((await patchEvent(id, { occurred: '2025-01-02T03:04:05.123456Z' })).json().data.attributes.occurred).toBe('2025-01-02T03:04:05.123456Z');
      expect((await patchEvent(id, { name: 'run' })).json().data.attributes).toEqual(expect.objectContaining({ name: 'run', occurred: '2025-01-02T03:04:05.123456Z' }));
      expect((await patchEvent(id, { occurred: null })).json().data.attributes.occurred).toBeNull();
    });

    it('anything but one instant is a 400 on /data/attributes/occurred, and nothing is stored or changed', async () => {
      const before = await eventsOf(tenant);
      const { id } = (await postEvent({ attributes: walk({ occurred: '2026-01-01T00:00:00Z' }) })).json().data;
      const refused = [
        '2026-11-21', // a day, not an instant
        '2026-11-21T18:02:41', // local time: no offset
        '2026-11-21T18:02Z', // no seconds
        '2026-11-21T18:02:41.1234567Z', // beyond microseconds: it would be rounded
        '2026-02-30T00:00:00Z',
        '2026-11-21T24:00:00Z',
        '0000-01-01T00:00:00Z',
        '2026-11-21T18:02:41+0100',
        'yesterday',
        1763748161000,
        {},
      ];
      for (const occurred of refused) {
        expectError(await postEvent({ attributes: walk({ occurred }) }), 400, { pointer: '/data/attributes/occurred' });
        expectError(await patchEvent(id, { occurred }), 400, { pointer: '/data/attributes/occurred' });
      }
      expect(await eventsOf(tenant)).toBe(before + 1);
      expect((await getEvent(id)).json().data.attributes.occurred).toBe('2026-01-01T00:00:00.000000Z');
    });

    it('property: any instant in any offset comes back as the same instant, in UTC, to the microsecond', async () => {
      const instant = fc.record({
        seconds: fc.bigInt({ min: -62_135_596_800n + 86_400n, max: 253_402_300_799n - 86_400n }), // 0001-01-02 … 9999-12-30 UTC
        fraction: fc.integer({ min: 0, max: 999_999 }),
        digits: fc.integer({ min: 0, max: 6 }),
        offsetMinutes: fc.integer({ min: -15 * 60 - 59, max: 15 * 60 + 59 }),
      });
      const pad = (n: number | bigint, width: number) => String(n).padStart(width, '0');
      const calendar = (epochSeconds: bigint) => {
        const date = new Date(0);
        date.setUTCSeconds(Number(epochSeconds)); // whole seconds: exact in a double
        return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
      };
      await fc.assert(
        fc.asyncProperty(instant, async ({ seconds, fraction, digits, offsetMinutes }) => {
          const kept = digits === 0 ? 0 : Math.floor(fraction / 10 ** (6 - digits)) * 10 ** (6 - digits);
          const offset = offsetMinutes === 0 ? 'Z' : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMinutes) / 60), 2)}:${pad(Math.abs(offsetMinutes) % 60, 2)}`;
          const local = seconds + BigInt(offsetMinutes * 60);
          const sent = `${calendar(local)}${digits === 0 ? '' : `.${pad(kept, 6).slice(0, digits)}`}${offset}`;
          // The instant is `seconds` (whole, floored) plus `kept` microseconds, whatever the offset it was sent in.
          const expected = `${calendar(seconds)}.${pad(kept, 6)}Z`;
          const response = await postEvent({ attributes: walk({ occurred: sent }) });
          expect({ sent, status: response.statusCode, occurred: response.json().data?.attributes.occurred }).toEqual({ sent, status: 201, occurred: expected });
        }),
        { numRuns: 40 },
      );
    });
  });

  describe('POST /my/twins/ with data.id', () => {
    const postTwin = (data: Record<string, unknown>, who = tenant) =>
      service.inject({ method: 'POST', url: '/my/twins/', headers: { ...who.headers(), 'content-type': JSON_API }, payload: document({ type: 'twins', ...data }) });

    it('creates the twin under the client\'s id; GET /twins/<id>/ finds it', async () => {
      const id = randomUUID();
      const response = await postTwin({ id: id.toUpperCase(), attributes: { name: 'Made offline' } });
      expect(response.statusCode).toBe(201);
      expect(response.json().data).toEqual(expect.objectContaining({ type: 'twins', id }));
      expect(response.headers.location).toBe(`http://localhost/twins/${id}/`);
      const read = await service.inject({ method: 'GET', url: `/twins/${id}/`, headers: tenant.headers() });
      expect(read.json().data.attributes.name).toBe('Made offline');
    });

    it('a taken id is a 409 id_exists (another organization\'s twin too) and changes nothing; a non-UUID is a 400', async () => {
      const id = randomUUID();
      expect((await postTwin({ id, attributes: { name: 'First' } })).statusCode).toBe(201);
      expect(expectError(await postTwin({ id, attributes: { name: 'Second' } }), 409, { pointer: '/data/id' }).code).toBe('id_exists');
      expect(expectError(await postTwin({ id, attributes: { name: 'Theirs' } }, other), 409, { pointer: '/data/id' }).code).toBe('id_exists');
      const [row] = await service.dataSource.query('SELECT name, organization_id FROM twins WHERE id = $1', [id]);
      expect(row).toEqual({ name: 'First', organization_id: tenant.organizationId });
      const counts = await service.dataSource.query('SELECT total FROM twin_counts WHERE organization_id = $1', [other.organizationId]);
      expectError(await postTwin({ id: 'twin-7', attributes: { name: 'Bad id' } }), 400, { pointer: '/data/id' });
      expect(await service.dataSource.query('SELECT total FROM twin_counts WHERE organization_id = $1', [other.organizationId])).toEqual(counts);
      expect(await count('twins', id)).toBe(1);
    });
  });
});
