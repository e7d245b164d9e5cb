import { randomUUID } from 'node:crypto';
import type { TwinTenant } from '../../src/common/auth/tenant';
import { ApiError } from '../../src/common/json-api/api-error';
import type { ResourceDocument } from '../../src/common/json-api/resource-body';
import type { UpdateEventAttributes } from '../../src/events/dto/event.dto';
import { EventStreams, REPLAY_BATCH, type StreamMessage } from '../../src/events/event-streams';
import { EventsService } from '../../src/events/events.service';
import { uuidv7 } from '../../src/events/uuidv7';
import { embeddedDatabase, TestApp, TestTenant } from '../support/test-app';

/**
 * `EventsService.stream` as a plain async iterator, without HTTP: the rules of the live stream
 * (replay, twin filtering, order, cleanup) against the real database and event bus. The wire form
 * of the same messages is covered by events-stream.e2e-spec.ts.
 */

const streamEnv = () => ({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '30000' });

const twinTenant = (created: TestTenant, twinId = created.twinId): TwinTenant => ({
  account: { id: created.accountId, name: 'Test account' },
  organization: { id: created.organizationId, name: 'Test organization' },
  twin: { id: twinId },
  tokenId: created.tokenId,
});

type Iterator = AsyncIterableIterator<StreamMessage>;

/** The next message that is not a heartbeat, or a failure after `timeoutMs`. */
async function nextMessage(stream: Iterator, timeoutMs = 5000): Promise<StreamMessage | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no message in time')), timeoutMs)));
  try {
    for (;;) {
      const next = await Promise.race([stream.next(), timeout]);
      if (next.done) return undefined;
      if (next.value.type !== 'heartbeat') return next.value;
    }
  } finally {
    clearTimeout(timer);
  }
}

async function changes(stream: Iterator, count: number): Promise<Extract<StreamMessage, { type: 'change' }>[]> {
  const out: Extract<StreamMessage, { type: 'change' }>[] = [];
  while (out.length < count) {
    const message = await nextMessage(stream);
    if (!message) throw new Error(`the stream ended after ${out.length} change(s)`);
    if (message.type === 'change') out.push(message);
  }
  return out;
}

const updateDocument = (id: string, data: Record<string, unknown>): ResourceDocument<UpdateEventAttributes> => ({
  id,
  attributes: { data } as UpdateEventAttributes,
  present: new Set(['data']),
  relationships: {},
});

describe('EventsService.stream: the timeline as an async iterator', () => {
  let app: TestApp;
  let events: EventsService;
  let registry: EventStreams;
  let tenant: TwinTenant;
  const open: Iterator[] = [];

  beforeAll(async () => {
    app = await TestApp.start(streamEnv());
    events = app.app.get(EventsService);
    registry = app.app.get(EventStreams);
    tenant = twinTenant(await app.tenant({ organization: 'Iterator org', twin: 'Iterated' }));
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) await stream.return?.();
  });
  afterAll(() => app.close());

  async function stream(lastEventId?: string, on = tenant, options = {}): Promise<Iterator> {
    const opened = await events.stream(on, lastEventId, options);
    open.push(opened);
    return opened;
  }

  const create = (name: string, data: Record<string, unknown> = {}, on = tenant) =>
    events.create(on, { attributes: { name, category: 'iterator', data }, present: new Set(['name', 'category', 'data']), relationships: {} }, undefined);

  it('opens with the twin, then yields created, updated and deleted changes as committed, in order', async () => {
    const messages = await stream();
    expect(await nextMessage(messages)).toEqual({ type: 'opened', twinId: tenant.twin.id, retryMs: 2000 });
    const created = await create('walk', { steps: 1 });
    const updated = (await events.update(tenant, created.resource.id, updateDocument(created.resource.id, { steps: 2 }))).value;
    await events.delete(tenant, created.resource.id, undefined);
    const [first, second, third] = await changes(messages, 3);
    expect(first).toEqual({ type: 'change', op: 'created', id: created.resource.id, data: expect.any(String), name: 'walk', category: 'iterator' });
    expect(JSON.parse(first.data)).toEqual(created.resource);
    expect(second.op).toBe('updated');
    expect(JSON.parse(second.data)).toEqual(updated);
    expect(third).toEqual({ type: 'change', op: 'deleted', id: created.resource.id, data: JSON.stringify({ type: 'events', id: created.resource.id }), name: 'walk', category: 'iterator' });
  });

  it('only changes of its own twin arrive', async () => {
    const [other] = await app.dataSource.query(`INSERT INTO twins (organization_id, name) VALUES ($1, 'Sibling') RETURNING id`, [tenant.organization.id]);
    const sibling: TwinTenant = { ...tenant, twin: { id: other.id } };
    const messages = await stream();
    await nextMessage(messages);
    await create('theirs', {}, sibling);
    const mine = await create('mine');
    const [message] = await changes(messages, 1);
    expect(message.id).toBe(mine.resource.id);
  });

  it('Last-Event-ID replays the stored events after it in id order, across replay batches, then goes live', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Replay org', twin: 'Replayed' }));
    const first = await create('first', {}, own);
    const ids = Array.from({ length: REPLAY_BATCH + 2 }, () => uuidv7());
    await app.dataSource.query(
      `INSERT INTO events (id, organization_id, twin_id, name, category, data)
       SELECT id, $2, $3, 'stored', 'replay', '{}' FROM unnest($1::uuid[]) AS id`,
      [ids, own.organization.id, own.twin.id],
    );
    const messages = await stream(first.resource.id.toUpperCase(), own);
    expect((await nextMessage(messages))?.type).toBe('opened');
    const replayed = await changes(messages, ids.length);
    expect(replayed.map((message) => message.id)).toEqual(ids);
    expect(new Set(replayed.map((message) => message.op))).toEqual(new Set(['created']));
    const live = await create('live', {}, own);
    const [next] = await changes(messages, 1);
    expect(next.id).toBe(live.resource.id);
  });

  it('Last-Event-ID resumes in timeline order whatever the ids: client-generated ones, and a deleted UUIDv7 one', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Client ids org', twin: 'Offline' }));
    const named = (id: string, name: string) =>
      events.create(own, { id, attributes: { name, category: 'offline', data: {} }, present: new Set(['name', 'category', 'data']), relationships: {} }, undefined);
    // Created in this order; by id they would sort the other way round.
    const high = await named(`ffffffff${randomUUID().slice(8)}`, 'high');
    const low = await named(`00000000-0000-4000-8000-${randomUUID().slice(-12)}`, 'low');
    const middle = await named(randomUUID(), 'middle');
    const resumed = await stream(high.resource.id, own);
    await nextMessage(resumed);
    expect((await changes(resumed, 2)).map((message) => message.id)).toEqual([low.resource.id, middle.resource.id]);

    // The event named by Last-Event-ID is gone: its UUIDv7 says when it was made (to the millisecond,
    // so the events before it are a few milliseconds older here).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const gone = await create('gone', {}, own);
    const after = await create('after', {}, own);
    await events.delete(own, gone.resource.id, undefined);
    const again = await stream(gone.resource.id, own);
    await nextMessage(again);
    expect((await changes(again, 1))[0].id).toBe(after.resource.id);
  });

  it('name and category filters: only changes of matching events, deletions by the name they had, the replay too', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Filter org', twin: 'Filtered' }));
    const add = (name: string, category: string) =>
      events.create(own, { attributes: { name, category, data: {} }, present: new Set(['name', 'category', 'data']), relationships: {} }, undefined);
    const walks = await stream(undefined, own, { filter: { name: 'walk' } });
    const sport = await stream(undefined, own, { filter: { name: 'walk', category: 'sport' } });
    await nextMessage(walks);
    await nextMessage(sport);
    const run = await add('run', 'sport');
    const walk = await add('walk', 'leisure');
    const sportyWalk = await add('walk', 'sport');
    await events.update(own, run.resource.id, updateDocument(run.resource.id, { km: 5 }));
    await events.update(own, walk.resource.id, updateDocument(walk.resource.id, { km: 2 }));
    await events.delete(own, run.resource.id, undefined);
    await events.delete(own, walk.resource.id, undefined);
    const seen = (messages: Awaited<ReturnType<typeof changes>>) => messages.map((message) => `${message.op} ${message.id}`);
    expect(seen(await changes(walks, 4))).toEqual([
      `created ${walk.resource.id}`,
      `created ${sportyWalk.resource.id}`,
      `updated ${walk.resource.id}`,
      `deleted ${walk.resource.id}`,
    ]);
    expect(seen(await changes(sport, 1))).toEqual([`created ${sportyWalk.resource.id}`]);
    // Nothing else was waiting: the next thing either stream yields is a heartbeat or nothing.
    const more = await Promise.race([changes(sport, 1).then(() => 'more', () => 'none'), new Promise((resolve) => setTimeout(() => resolve('none'), 300))]);
    expect(more).toBe('none');

    const replayed = await stream(run.resource.id, own, { filter: { category: 'sport' } });
    await nextMessage(replayed);
    expect(seen(await changes(replayed, 1))).toEqual([`created ${sportyWalk.resource.id}`]);
  });

  it('a malformed Last-Event-ID or an unknown parameter is refused before any stream exists', async () => {
    const before = registry.size;
    await expect(events.stream(tenant, 'yesterday')).rejects.toBeInstanceOf(ApiError);
    await expect(events.stream(tenant, ['a', 'b'])).rejects.toMatchObject({ status: 400 });
    expect(registry.size).toBe(before);
  });

  it('return() forgets the stream at once, also while a next() waits; so does an abort', async () => {
    const before = registry.size;
    const messages = await stream();
    await nextMessage(messages);
    expect(registry.size).toBe(before + 1);
    const waiting = messages.next();
    await messages.return?.();
    expect(registry.size).toBe(before);
    await expect(waiting).resolves.toEqual({ value: undefined, done: true });

    const controller = new AbortController();
    const aborted = await stream(undefined, tenant, { signal: controller.signal });
    expect(registry.size).toBe(before + 1);
    controller.abort();
    expect(registry.size).toBe(before);
    await nextMessage(aborted);
    expect(await aborted.next()).toEqual({ value: undefined, done: true });
  });

  it('closing the application ends the stream after what was queued', async () => {
    const own = await TestApp.start(streamEnv());
    const messages = await own.app.get(EventsService).stream(tenant, undefined);
    const closing = own.close();
    expect((await nextMessage(messages))?.type).toBe('opened');
    expect(await messages.next()).toEqual({ value: undefined, done: true });
    await closing;
  });
});
