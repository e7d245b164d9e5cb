import type { AddressInfo } from 'node:net';
import { EventStreams } from '../../src/events/event-streams';
import { SseClient } from '../support/sse-client';
import { document, embeddedDatabase, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

const portOf = (service: TestApp) => (service.app.getHttpServer().address() as AddressInfo).port;
const streamEnv = () => ({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '100' });

describe('events: GET /events/stream (server-sent events)', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let port: number;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    service = await TestApp.start(streamEnv());
    await service.app.listen(0, '127.0.0.1');
    port = portOf(service);
    tenant = await service.tenant({ organization: 'Stream org', twin: 'Streamer' });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(() => service.close());

  async function open(headers: Record<string, string> = tenant.headers({ twin: true }), on = port, path?: string): Promise<SseClient> {
    const client = await SseClient.open(on, headers, path);
    clients.push(client);
    return client;
  }

  const post = (attributes: Record<string, unknown>, twin: string | boolean = true, on = service) =>
    on.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin }), 'content-type': JSON_API }, payload: document({ type: 'events', attributes }) });

  it('opens a text/event-stream and sends heartbeats', async () => {
    const client = await open();
    expect(client.response.statusCode).toBe(200);
    expect(client.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(client.response.headers['cache-control']).toMatch(/no-cache/);
    expect(client.response.headers['x-request-id']).toEqual(expect.any(String));
    expect(client.response.headers['x-content-type-options']).toBe('nosniff');
    await client.until(() => client.comments.filter((c) => c.startsWith('heartbeat')).length >= 2, 'two heartbeats');
  });

  it('delivers created, updated and deleted changes of the twin, in order', async () => {
    const client = await open();
    await client.until(() => client.comments.length > 0, 'the opening comment');
    const created = await post({ name: 'walk', category: 'activity', data: { steps: 1, gone: true } });
    expect(created.statusCode).toBe(201);
    const event = created.json().data;
    const patched = await service.inject({
      method: 'PATCH',
      url: `/events/${event.id}`,
      headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API },
      payload: document({ type: 'events', id: event.id, attributes: { data: { steps: 2, gone: null } } }),
    });
    expect(patched.statusCode).toBe(200);
    const deleted = await service.inject({ method: 'DELETE', url: `/events/${event.id}`, headers: tenant.headers({ twin: true }) });
    expect(deleted.statusCode).toBe(204);

    const [first, second, third] = await client.take(3);
    // Message ids are change-log positions, increasing; the event's id is in the data.
    const POSITION = /^[1-9][0-9]*$/;
    expect(first).toEqual({ event: 'created', id: expect.stringMatching(POSITION), data: expect.any(String) });
    expect(JSON.parse(first.data!)).toEqual(event);
    expect(JSON.parse(first.data!).attributes.timestamp).toMatch(MICROSECOND_TIMESTAMP);
    expect(second.event).toBe('updated');
    expect(JSON.parse(second.data!)).toEqual(patched.json().data);
    expect(third).toEqual({ event: 'deleted', id: expect.stringMatching(POSITION), data: expect.any(String) });
    expect(JSON.parse(third.data!)).toEqual({ type: 'events', id: event.id });
    expect(BigInt(first.id!) < BigInt(second.id!) && BigInt(second.id!) < BigInt(third.id!)).toBe(true);
  });

  it('a batch (POST /operations) arrives as its creations, in the batch order, each equal to its result', async () => {
    const client = await open();
    await client.until(() => client.comments.length > 0, 'the opening comment');
    // Event 20 is bigger than the others (4 kB of data), still in its place.
    const operations = Array.from({ length: 40 }, (_, n) => ({
      op: 'add',
      data: { type: 'events', attributes: { name: `step ${n}`, category: 'batch', data: { n, nested: { ok: [n] }, ...(n === 20 ? { blob: 'x'.repeat(4000) } : {}) } } },
    }));
    const answer = await service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...tenant.headers({ twin: true }), 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
      payload: JSON.stringify({ 'atomic:operations': operations }),
    });
    expect(answer.statusCode).toBe(200);
    const results = answer.json()['atomic:results'].map((result: { data: unknown }) => result.data);
    const messages = await client.take(40);
    expect(messages.map((message) => message.event)).toEqual(Array(40).fill('created'));
    expect(messages.map((message) => JSON.parse(message.data!))).toEqual(results);
    expect(results.map((resource: { attributes: { data: { n: number } } }) => resource.attributes.data.n)).toEqual(operations.map((_, n) => n));
    const positions = messages.map((message) => BigInt(message.id!));
    expect(positions.every((position, i) => i === 0 || position > positions[i - 1])).toBe(true);
  });

  it('only the X-Twin timeline: events of another twin of the organization do not arrive', async () => {
    const rows: { id: string }[] = await service.dataSource.query(`INSERT INTO twins (organization_id, name) VALUES ($1, 'Other') RETURNING id`, [tenant.organizationId]);
    const client = await open();
    await client.until(() => client.comments.length > 0, 'the opening comment');
    expect((await post({ name: 'theirs', category: 'c', data: {} }, rows[0].id)).statusCode).toBe(201);
    const mine = await post({ name: 'mine', category: 'c', data: {} });
    const [message] = await client.take(1);
    expect(JSON.parse(message.data!).id).toBe(mine.json().data.id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.messages).toHaveLength(1);
  });

  it('events too big for a notification still arrive whole', async () => {
    const client = await open();
    await client.until(() => client.comments.length > 0, 'the opening comment');
    const data = { blob: 'x'.repeat(20_000) };
    const created = await post({ name: 'big', category: 'c', data });
    const [message] = await client.take(1);
    expect(JSON.parse(message.data!)).toEqual(created.json().data);
  });

  it('Last-Event-ID replays every change made while away (created, updated, deleted), in order, then goes live', async () => {
    const first = await open();
    const ids: string[] = [];
    ids.push((await post({ name: 'e0', category: 'replay', data: { i: 0 } })).json().data.id);
    const [seen] = await first.take(1);
    first.close();
    for (let i = 1; i < 4; i++) ids.push((await post({ name: `e${i}`, category: 'replay', data: { i } })).json().data.id);
    await service.inject({ method: 'DELETE', url: `/events/${ids[2]}`, headers: tenant.headers({ twin: true }) });
    const patched = await service.inject({
      method: 'PATCH',
      url: `/events/${ids[0]}`,
      headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API },
      payload: document({ type: 'events', id: ids[0], attributes: { name: 'e0 again' } }),
    });
    expect(patched.statusCode).toBe(200);
    const client = await open({ ...tenant.headers({ twin: true }), 'last-event-id': seen.id! });
    const replayed = await client.take(5);
    expect(replayed.map((m) => [m.event, JSON.parse(m.data!).id])).toEqual([
      ['created', ids[1]],
      ['created', ids[2]],
      ['created', ids[3]],
      ['deleted', ids[2]],
      ['updated', ids[0]],
    ]);
    expect(JSON.parse(replayed[2].data!).attributes).toEqual(expect.objectContaining({ name: 'e3', data: { i: 3 } }));
    expect(JSON.parse(replayed[4].data!)).toEqual(patched.json().data);
    const live = (await post({ name: 'live', category: 'replay', data: {} })).json().data.id;
    const [, , , , , sixth] = await client.take(6);
    expect(sixth).toEqual(expect.objectContaining({ event: 'created' }));
    expect(JSON.parse(sixth.data!).id).toBe(live);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(client.messages).toHaveLength(6);
  });

  it('a Last-Event-ID the change log cannot continue from opens with a reset message', async () => {
    const client = await open({ ...tenant.headers({ twin: true }), 'last-event-id': '9999999999999' });
    const [reset] = await client.take(1);
    expect(reset).toEqual({ event: 'reset', id: expect.stringMatching(/^[0-9]+$/), data: JSON.stringify({ position: reset.id }) });
    const live = (await post({ name: 'after reset', category: 'replay', data: {} })).json().data.id;
    const [, next] = await client.take(2);
    expect(JSON.parse(next.data!).id).toBe(live);
  });

  it('?name= and ?category= limit the stream to matching events', async () => {
    const client = await open(tenant.headers({ twin: true }), port, '/events/stream?category=filtered-http');
    expect(client.response.statusCode).toBe(200);
    await post({ name: 'other', category: 'elsewhere', data: {} });
    const wanted = (await post({ name: 'kept', category: 'filtered-http', data: {} })).json().data.id;
    const [first] = await client.take(1);
    expect(first).toEqual(expect.objectContaining({ event: 'created' }));
    expect(JSON.parse(first.data!).id).toBe(wanted);
    const repeated = await open(tenant.headers({ twin: true }), port, '/events/stream?name=a&name=b');
    expect(repeated.response.statusCode).toBe(400);
    expect(JSON.parse(await repeated.body()).errors[0].source).toEqual({ parameter: 'name' });
  });

  it('errors before the stream opens are JSON:API documents', async () => {
    const badResume = await open({ ...tenant.headers({ twin: true }), 'last-event-id': 'yesterday' });
    expect(badResume.response.statusCode).toBe(400);
    expect(badResume.response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
    expect(JSON.parse(await badResume.body()).errors[0].source).toEqual({ header: 'Last-Event-ID' });
    const noTwin = await open(tenant.headers());
    expect(noTwin.response.statusCode).toBe(400);
    expect(JSON.parse(await noTwin.body()).errors[0].source).toEqual({ header: 'X-Twin' });
    const noToken = await open({});
    expect(noToken.response.statusCode).toBe(401);
    await noToken.body();
    const unknownParameter = await open(tenant.headers({ twin: true }), port, '/events/stream?since=2026-01-01');
    expect(unknownParameter.response.statusCode).toBe(400);
    expect(JSON.parse(await unknownParameter.body()).errors[0].source).toEqual({ parameter: 'since' });
  });

  it('a client that disconnects is forgotten', async () => {
    const streams = service.app.get(EventStreams);
    const before = streams.size;
    const client = await open();
    await client.until(() => client.comments.length > 0, 'the opening comment');
    expect(streams.size).toBe(before + 1);
    client.close();
    const deadline = Date.now() + 2000;
    while (streams.size !== before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(streams.size).toBe(before);
  });

  (embeddedDatabase() ? it.skip : it)('a stream held by a second instance receives an event posted through the first (needs real PostgreSQL LISTEN/NOTIFY)', async () => {
    const second = await TestApp.start(streamEnv());
    try {
      await second.app.listen(0, '127.0.0.1');
      const client = await open(tenant.headers({ twin: true }), portOf(second));
      await client.until(() => client.comments.length > 0, 'the opening comment');
      const created = await post({ name: 'across', category: 'instances', data: { via: 'first' } });
      const [message] = await client.take(1);
      expect(message.event).toBe('created');
      expect(JSON.parse(message.data!)).toEqual(created.json().data);
    } finally {
      await second.close();
    }
  });

  it('closing the application ends open streams promptly', async () => {
    const own = await TestApp.start(streamEnv());
    await own.app.listen(0, '127.0.0.1');
    const client = await open(tenant.headers({ twin: true }), portOf(own));
    await client.until(() => client.comments.length > 0, 'the opening comment');
    const started = Date.now();
    await own.close();
    await client.until(() => client.ended, 'the stream to end', 3000);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
