import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { document, embeddedDatabase, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

/**
 * `POST /operations` (JSON:API Atomic Operations): many event and twin changes in one transaction, the
 * results in order, and on any failure the failing operation's error and nothing stored.
 */
const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"';

describe('POST /operations: atomic batches of event and twin changes', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Batch org', twin: 'Batcher' });
    other = await service.tenant({ organization: 'Other batch org', twin: 'Other batcher' });
  });
  afterAll(() => service.close());

  const batch = (operations: unknown[], extra: Record<string, string> = {}, who = tenant, twin = true) =>
    service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...who.headers({ twin }), 'content-type': ATOMIC, ...extra },
      payload: JSON.stringify({ 'atomic:operations': operations }),
    });
  const addEvent = (attributes: Record<string, unknown>, id?: string) => ({ op: 'add', data: { type: 'events', ...(id ? { id } : {}), attributes } });
  const walk = (n: number, extra: Record<string, unknown> = {}) => ({ name: `walk ${n}`, category: 'batch', data: { n }, ...extra });
  const eventsOf = async (who: TestTenant): Promise<number> =>
    Number((await service.dataSource.query(`SELECT count(*) AS n FROM events WHERE twin_id = $1`, [who.twinId]))[0].n);
  const changesOf = async (who: TestTenant): Promise<number> =>
    Number((await service.dataSource.query(`SELECT count(*) AS n FROM changes WHERE organization_id = $1`, [who.organizationId]))[0].n);
  const getEvent = (id: string) => service.inject({ method: 'GET', url: `/events/${id}`, headers: tenant.headers({ twin: true }) });
  const postEvent = (attributes: Record<string, unknown>) =>
    service.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API }, payload: document({ type: 'events', attributes }) });

  it('applies adds, updates and removes of events and adds and updates of twins in order, answering each result', async () => {
    const existing = (await postEvent(walk(0))).json().data;
    const chosen = randomUUID();
    const twinId = randomUUID();
    const response = await batch([
      addEvent(walk(1, { occurred: '2026-11-21T18:02:41.5+01:00' })),
      addEvent(walk(2), chosen.toUpperCase()),
      { op: 'update', data: { type: 'events', id: existing.id, attributes: { data: { n: 10, extra: true } } } },
      { op: 'remove', ref: { type: 'events', id: chosen } },
      { op: 'add', data: { type: 'twins', id: twinId, attributes: { name: 'Made in a batch' } } },
      { op: 'update', ref: { type: 'twins', id: twinId }, data: { type: 'twins', id: twinId, attributes: { description: 'Changed in the same batch' } } },
    ]);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(ATOMIC);
    const results = response.json()['atomic:results'];
    expect(results).toHaveLength(6);
    expect(results[0]).toEqual({
      data: {
        type: 'events',
        id: expect.any(String),
        attributes: { name: 'walk 1', category: 'batch', data: { n: 1 }, timestamp: expect.stringMatching(MICROSECOND_TIMESTAMP), occurred: '2026-11-21T17:02:41.500000Z' },
      },
    });
    expect(results[1].data.id).toBe(chosen);
    expect(results[2].data.attributes.data).toEqual({ n: 10, extra: true });
    expect(results[3]).toEqual({});
    expect(results[4].data).toEqual(expect.objectContaining({ type: 'twins', id: twinId }));
    expect(results[5].data.attributes.description).toBe('Changed in the same batch');
    // Stored as answered.
    expect((await getEvent(results[0].data.id)).json().data).toEqual(results[0].data);
    expect((await getEvent(chosen)).statusCode).toBe(404);
    expect((await getEvent(existing.id)).json().data).toEqual(results[2].data);
  });

  it('a failing operation fails the batch: its status and error under /atomic:operations/<n>, and nothing stored', async () => {
    const taken = (await postEvent(walk(0))).json().data.id;
    const before = { events: await eventsOf(tenant), changes: await changesOf(tenant) };
    const cases: [unknown[], number, string][] = [
      [[addEvent(walk(1)), addEvent(walk(2), taken), addEvent(walk(3))], 409, '/atomic:operations/1/data/id'],
      [[addEvent(walk(1)), addEvent({ name: 'no category', data: {} })], 400, '/atomic:operations/1/data/attributes/category'],
      [[addEvent(walk(1)), { op: 'update', data: { type: 'events', id: randomUUID(), attributes: { name: 'x' } } }], 404, '/atomic:operations/1'],
      [[addEvent(walk(1)), { op: 'remove', ref: { type: 'events', id: randomUUID() } }, addEvent(walk(2))], 404, '/atomic:operations/1'],
      [[addEvent(walk(1)), { op: 'add', data: { type: 'twins', attributes: { name: 'T', unknown: 1 } } }], 400, '/atomic:operations/1/data/attributes/unknown'],
      [[addEvent(walk(1)), { op: 'remove', ref: { type: 'twins', id: tenant.twinId } }], 403, '/atomic:operations/1/ref/type'],
      [[{ op: 'rename', data: { type: 'events' } }], 400, '/atomic:operations/0/op'],
      [[addEvent(walk(1)), { op: 'add', data: { type: 'quests', attributes: {} } }], 400, '/atomic:operations/1/data/type'],
      [[addEvent(walk(1)), { op: 'add', data: { type: 'events', lid: 'a', attributes: walk(2) } }], 400, '/atomic:operations/1/data/lid'],
      [[{ op: 'update', data: { type: 'events', id: taken, attributes: { name: 'x' } } }, addEvent({ name: 1, category: 'c', data: {} })], 400, '/atomic:operations/1/data/attributes/name'],
      // The first failure is the one reported, even when a later operation is malformed.
      [[addEvent(walk(1)), { op: 'remove', ref: { type: 'events', id: randomUUID() } }, { op: 'bad' }], 404, '/atomic:operations/1'],
      [[addEvent(walk(1)), addEvent(walk(1), taken.toUpperCase())], 409, '/atomic:operations/1/data/id'],
    ];
    for (const [operations, status, pointer] of cases) {
      const error = expectError(await batch(operations), status);
      expect({ pointer: error.source?.pointer, status }).toEqual({ pointer, status });
    }
    // Two adds with the same new id in one batch: the second is the conflict.
    const twice = randomUUID();
    expect(expectError(await batch([addEvent(walk(1), twice), addEvent(walk(2), twice)]), 409, { pointer: '/atomic:operations/1/data/id' }).code).toBe('id_exists');
    expect({ events: await eventsOf(tenant), changes: await changesOf(tenant) }).toEqual(before);
    expect((await getEvent(taken)).json().data.attributes.name).toBe('walk 0');
  });

  it('refuses documents that are not atomic operations, with the right status', async () => {
    expectError(await batch([]), 400, { pointer: '/atomic:operations' });
    expectError(await batch(Array.from({ length: 1001 }, (_, i) => addEvent(walk(i)))), 400, { pointer: '/atomic:operations' });
    const plain = await service.inject({ method: 'POST', url: '/operations', headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API }, payload: JSON.stringify({ 'atomic:operations': [addEvent(walk(1))] }) });
    expectError(plain, 415, { header: 'Content-Type' });
    const notArray = await service.inject({ method: 'POST', url: '/operations', headers: { ...tenant.headers({ twin: true }), 'content-type': ATOMIC }, payload: '{"atomic:operations":{}}' });
    expectError(notArray, 400, { pointer: '/atomic:operations' });
    // Event operations act on the X-Twin timeline.
    expect(expectError(await batch([addEvent(walk(1))], {}, tenant, false), 400).source).toEqual({ header: 'X-Twin' });
    // Twins alone need no twin.
    expect((await batch([{ op: 'add', data: { type: 'twins', attributes: { name: 'No twin needed' } } }], {}, tenant, false)).statusCode).toBe(200);
  });

  it('takes 1,000 events of 5 MiB at most; a bigger body is a 413 and stores nothing', async () => {
    const before = await eventsOf(tenant);
    const thousand = Array.from({ length: 1000 }, (_, i) => addEvent(walk(i, { data: { n: i, text: 'x'.repeat(4000) } })));
    const response = await batch(thousand);
    expect(response.statusCode).toBe(200);
    const results = response.json()['atomic:results'];
    expect(results.map((result: { data: { attributes: { data: { n: number } } } }) => result.data.attributes.data.n)).toEqual(thousand.map((_, i) => i));
    expect(await eventsOf(tenant)).toBe(before + 1000);
    const tooBig = Array.from({ length: 1000 }, (_, i) => addEvent(walk(i, { data: { text: 'x'.repeat(5300) } })));
    expectError(await batch(tooBig), 413);
    expect(await eventsOf(tenant)).toBe(before + 1000);
  });

  it('Idempotency-Key covers the whole batch: a retry answers the first answer, another batch under the key is a 422', async () => {
    const key = `batch-${randomUUID()}`;
    const operations = [addEvent(walk(1)), addEvent(walk(2))];
    const first = await batch(operations, { 'idempotency-key': key });
    expect(first.statusCode).toBe(200);
    const before = await eventsOf(tenant);
    const again = await batch(operations, { 'idempotency-key': key });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await eventsOf(tenant)).toBe(before);
    const reused = await batch([addEvent(walk(3))], { 'idempotency-key': key });
    expect(expectError(reused, 422, { header: 'Idempotency-Key' }).code).toBe('idempotency_key_reused');
    // A batch that failed leaves its key free.
    const failedKey = `failed-${randomUUID()}`;
    expectError(await batch([addEvent({ name: 'x' })], { 'idempotency-key': failedKey }), 400);
    expect((await batch(operations, { 'idempotency-key': failedKey })).statusCode).toBe(200);
  });

  // Two transactions are needed: the embedded database is one session.
  (embeddedDatabase() ? it.skip : it)('a batch that deadlocks with another transaction is a retryable 503, stores nothing, and goes through when sent again', async () => {
    const [first, second] = [(await postEvent(walk(1))).json().data, (await postEvent(walk(2))).json().data];
    const operations = [first, second].map((event, n) => ({ op: 'update', data: { type: 'events', id: event.id, attributes: { data: { n: 100 + n } } } }));
    const other = service.dataSource.createQueryRunner();
    await other.connect();
    try {
      await other.startTransaction();
      await other.query('SELECT 1 FROM events WHERE id = $1 FOR UPDATE', [second.id]);
      // The batch changes the first event, then waits for the second, which the other transaction holds;
      // the other then wants the first: a deadlock, which PostgreSQL breaks by aborting the batch (it
      // has waited longest, so its check runs first).
      const answer = service.inject({
        method: 'POST',
        url: '/operations',
        headers: { ...tenant.headers({ twin: true }), 'content-type': ATOMIC },
        payload: JSON.stringify({ 'atomic:operations': operations }),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other.query(`UPDATE events SET data = data || '{"other": true}' WHERE id = $1`, [first.id]);
      const refused = await answer;
      await other.rollbackTransaction();
      const error = expectError(refused, 503);
      expect(error.code).toBe('transaction_conflict');
      expect(refused.headers['retry-after']).toBe('1');
      expect((await getEvent(first.id)).json().data.attributes.data).toEqual({ n: 1 });
      const again = await batch(operations);
      expect(again.statusCode).toBe(200);
      expect((await getEvent(first.id)).json().data.attributes.data).toEqual({ n: 100 });
    } finally {
      if (other.isTransactionActive) await other.rollbackTransaction();
      await other.release();
    }
  });

  it('tenancy: events and twins of other organizations cannot be changed, and their existence is not told', async () => {
    const theirs = (
      await service.inject({ method: 'POST', url: '/events/', headers: { ...other.headers({ twin: true }), 'content-type': JSON_API }, payload: document({ type: 'events', attributes: walk(1) }) })
    ).json().data.id;
    expectError(await batch([{ op: 'update', data: { type: 'events', id: theirs, attributes: { name: 'mine now' } } }]), 404, { pointer: '/atomic:operations/0' });
    expectError(await batch([{ op: 'remove', ref: { type: 'events', id: theirs } }]), 404, { pointer: '/atomic:operations/0' });
    expectError(await batch([{ op: 'update', data: { type: 'twins', id: other.twinId, attributes: { name: 'mine now' } } }]), 404, { pointer: '/atomic:operations/0' });
  });

  it('free-form data comes back as sent, whatever its members (property)', async () => {
    // Text PostgreSQL can store: no U+0000, no lone surrogate (UTF-8 would replace it).
    const storable = (text: string) => !text.includes('\u0000') && Buffer.from(text).toString() === text;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.dictionary(fc.string({ maxLength: 8 }).filter(storable), fc.jsonValue({ maxDepth: 2 }).filter((value) => !JSON.stringify(value).includes('\\u0000')), { maxKeys: 4 }), { minLength: 1, maxLength: 5 }), async (datas) => {
        const response = await batch(datas.map((data, i) => addEvent(walk(i, { data }))));
        expect(response.statusCode).toBe(200);
        const results = response.json()['atomic:results'];
        // Numbers like -0 come back as 0 from JSON, as from POST /events/.
        expect(results.map((result: { data: { attributes: { data: unknown } } }) => result.data.attributes.data)).toEqual(datas.map((data) => JSON.parse(JSON.stringify(data))));
        for (const result of results) expect((await getEvent(result.data.id)).json().data).toEqual(result.data);
      }),
      { numRuns: 15 },
    );
  });
});
