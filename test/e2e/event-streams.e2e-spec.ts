import type { TwinTenant } from '../../src/common/auth/tenant';
import { ApiError } from '../../src/common/json-api/api-error';
import type { ResourceDocument } from '../../src/common/json-api/resource-body';
import type { UpdateEventAttributes } from '../../src/events/dto/event.dto';
import { JsonText } from '../../src/common/json-api/resource';
import { EventStreams, readLastEventId, REPLAY_BATCH, type StreamMessage } from '../../src/events/event-streams';
import { EventsService } from '../../src/events/events.service';
import { ChangeLog } from '../../src/database/change-log';
import { embeddedDatabase, TestApp, TestTenant } from '../support/test-app';

/**
 * `EventsService.stream` as a plain async iterator, without HTTP: the rules of the live stream
 * (replay, twin filtering, order, cleanup) against the real database and event bus. The wire form
 * of the same messages is covered by events-stream.e2e-spec.ts.
 */

const streamEnv = () => ({ EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '30000' });

const twinTenant = (created: TestTenant, twinId = created.twinId): TwinTenant => created.asTwinTenant(twinId);

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
    const opened = await events.stream(on, readLastEventId(lastEventId), options);
    open.push(opened);
    return opened;
  }

  const create = (name: string, data: Record<string, unknown> = {}, on = tenant) =>
    events.create(on, { attributes: { name, category: 'iterator', data }, present: new Set(['name', 'category', 'data']), relationships: {} }, undefined);

  it('opens with the twin, then yields created, updated and deleted changes as committed, in order', async () => {
    const messages = await stream();
    expect(await nextMessage(messages)).toEqual({ type: 'opened', twinId: tenant.twin.id, retryMs: 2000 });
    const created = await create('walk', { steps: 1 });
    const updated = (await events.update(tenant, created.id, updateDocument(created.id, { steps: 2 }))).value;
    await events.delete(tenant, created.id, undefined);
    const [first, second, third] = await changes(messages, 3);
    const position = expect.stringMatching(/^[1-9][0-9]*$/);
    expect(first).toEqual({ type: 'change', op: 'created', position, id: created.id, data: expect.any(String), name: 'walk', category: 'iterator' });
    expect(JSON.parse(first.data)).toEqual(JSON.parse((created.resource as JsonText).text));
    expect(second.op).toBe('updated');
    expect(JSON.parse(second.data)).toEqual(JSON.parse(updated.text));
    expect(third).toEqual({ type: 'change', op: 'deleted', position, id: created.id, data: expect.any(String), name: 'walk', category: 'iterator' });
    expect(JSON.parse(third.data)).toEqual({ type: 'events', id: created.id });
    expect(BigInt(first.position) < BigInt(second.position) && BigInt(second.position) < BigInt(third.position)).toBe(true);
  });

  it('only changes of its own twin arrive', async () => {
    const [other] = await app.dataSource.query(`INSERT INTO twins (organization_id, name) VALUES ($1, 'Sibling') RETURNING id`, [tenant.organization.id]);
    const sibling: TwinTenant = { ...tenant, twin: { id: other.id } };
    const messages = await stream();
    await nextMessage(messages);
    await create('theirs', {}, sibling);
    const mine = await create('mine');
    const [message] = await changes(messages, 1);
    expect(message.id).toBe(mine.id);
  });

  it('Last-Event-ID (a position) replays every change since, in commit order, across replay batches, then goes live', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Replay org', twin: 'Replayed' }));
    const live = await stream(undefined, own);
    await nextMessage(live);
    const first = await create('first', {}, own);
    const [seen] = await changes(live, 1);
    await live.return?.();
    // While the client is away: creations (more than one replay batch), an update, a deletion.
    const created = [];
    for (let i = 0; i < REPLAY_BATCH + 1; i++) created.push((await create(`away ${i}`, {}, own)).id);
    await events.update(own, first.id, updateDocument(first.id, { seen: true }));
    await events.delete(own, created[0], undefined);
    const messages = await stream(seen.position, own);
    expect((await nextMessage(messages))?.type).toBe('opened');
    const replayed = await changes(messages, created.length + 2);
    expect(replayed.map((message) => `${message.op} ${message.id}`)).toEqual([
      ...created.map((id) => `created ${id}`),
      `updated ${first.id}`,
      `deleted ${created[0]}`,
    ]);
    expect(JSON.parse(replayed[created.length].data).attributes.data).toEqual({ seen: true });
    const positions = replayed.map((message) => BigInt(message.position));
    expect(positions.every((position, i) => i === 0 || position > positions[i - 1])).toBe(true);
    const next = await create('live', {}, own);
    const [after] = await changes(messages, 1);
    expect(after.id).toBe(next.id);
  });

  it('an event id as Last-Event-ID (kept from before positions) resumes after its creation', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Event id org', twin: 'Kept' }));
    const kept = await create('kept', {}, own);
    const later = await create('later', {}, own);
    await events.update(own, kept.id, updateDocument(kept.id, { more: 1 }));
    const resumed = await stream(kept.id.toUpperCase(), own);
    await nextMessage(resumed);
    expect((await changes(resumed, 2)).map((message) => `${message.op} ${message.id}`)).toEqual([`created ${later.id}`, `updated ${kept.id}`]);
  });

  it('a position past the retention, or one the log never gave, opens with a reset and then goes live', async () => {
    const own = twinTenant(await app.tenant({ organization: 'Reset org', twin: 'Reset' }));
    const old = await create('old', {}, own);
    await create('also old', {}, own);
    const [{ position }] = await app.dataSource.query(`SELECT position::text AS position FROM changes WHERE subject_id = $1`, [old.id]);
    // Two days ago, then pruned as the retention (24 h) says.
    await app.dataSource.query(`UPDATE changes SET changed = now() - interval '2 days' WHERE twin_id = $1`, [own.twin.id]);
    expect(await app.app.get(ChangeLog).prune()).toBeGreaterThanOrEqual(2);
    for (const lastEventId of [position, '999999999999999']) {
      const messages = await stream(lastEventId, own);
      expect(await nextMessage(messages)).toEqual({ type: 'opened', twinId: own.twin.id, retryMs: 2000 });
      const reset = await nextMessage(messages);
      expect(reset).toEqual({ type: 'reset', position: expect.stringMatching(/^[0-9]+$/) });
      const fresh = await create('fresh', {}, own);
      const [next] = await changes(messages, 1);
      expect(next.id).toBe(fresh.id);
      expect(BigInt(next.position) > BigInt((reset as { position: string }).position)).toBe(true);
      await messages.return?.();
    }
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
    await events.update(own, run.id, updateDocument(run.id, { km: 5 }));
    await events.update(own, walk.id, updateDocument(walk.id, { km: 2 }));
    await events.delete(own, run.id, undefined);
    await events.delete(own, walk.id, undefined);
    const seen = (messages: Awaited<ReturnType<typeof changes>>) => messages.map((message) => `${message.op} ${message.id}`);
    expect(seen(await changes(walks, 4))).toEqual([
      `created ${walk.id}`,
      `created ${sportyWalk.id}`,
      `updated ${walk.id}`,
      `deleted ${walk.id}`,
    ]);
    expect(seen(await changes(sport, 1))).toEqual([`created ${sportyWalk.id}`]);
    // Nothing else was waiting: the next thing either stream yields is a heartbeat or nothing.
    const more = await Promise.race([changes(sport, 1).then(() => 'more', () => 'none'), new Promise((resolve) => setTimeout(() => resolve('none'), 300))]);
    expect(more).toBe('none');

    // The replay filters too: after the run's creation, the sport changes were the sporty walk's creation
    // and the run's update and deletion.
    const replayed = await stream(run.id, own, { filter: { category: 'sport' } });
    await nextMessage(replayed);
    expect(seen(await changes(replayed, 3))).toEqual([`created ${sportyWalk.id}`, `updated ${run.id}`, `deleted ${run.id}`]);
  });

  it('a malformed Last-Event-ID or an unknown parameter is refused before any stream exists', async () => {
    const before = registry.size;
    expect(() => readLastEventId('yesterday')).toThrow(ApiError);
    expect(() => readLastEventId(['a', 'b'])).toThrow(expect.objectContaining({ status: 400 }));
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
