import { Logger } from '@nestjs/common';
import type { TwinTenant } from '../../src/common/auth/tenant';
import { MAX_QUEUED_BYTES, REPLAY_BATCH, type StreamMessage, TimelineStream } from '../../src/events/event-streams';

/**
 * The rules of one timeline stream, without a database or HTTP: what a consumer pulls, in which
 * order, and when the stream ends. (The registry and the real replay query: test/e2e/event-streams.)
 */

const TWIN = '00000000-0000-7000-8000-0000000000aa';
const tenant: TwinTenant = { account: { id: 'a', name: 'A' }, organization: { id: 'o', name: 'O' }, twin: { id: TWIN }, tokenId: 't' };
const logger = { warn: jest.fn() } as unknown as Logger;

const id = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
/** A change of event `n` at change-log position `at` (by default: n). */
const change = (op: 'created' | 'updated' | 'deleted', n: number, data = '{}', at = n) => ({
  type: 'change' as const,
  op,
  position: String(at),
  id: id(n),
  data,
  name: 'e',
  category: 'c',
});
type Change = ReturnType<typeof change>;

interface Made {
  stream: TimelineStream;
  ended: jest.Mock;
  replayQueries: string[];
}

function make(options: { resumeAfter?: string; reset?: boolean; heartbeatMs?: number; replay?: (after: string) => Promise<Change[]>; signal?: AbortSignal } = {}): Made {
  const ended = jest.fn();
  const replayQueries: string[] = [];
  const replay = options.replay ?? (async () => []);
  const stream = new TimelineStream(
    tenant,
    options.resumeAfter === undefined ? {} : { after: options.resumeAfter, reset: options.reset },
    options.heartbeatMs ?? 60_000,
    (after) => {
      replayQueries.push(after);
      return replay(after);
    },
    ended,
    logger,
    options.signal,
  );
  made.push(stream);
  return { stream, ended, replayQueries };
}
const made: TimelineStream[] = [];
afterEach(() => {
  for (const stream of made.splice(0)) stream.close();
});

/** Pulls `count` messages. */
async function take(stream: TimelineStream, count: number): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for (let i = 0; i < count; i++) {
    const next = await stream.next();
    if (next.done) throw new Error(`the stream ended after ${out.length} message(s)`);
    out.push(next.value);
  }
  return out;
}

/** Whether `next()` settles within a few turns of the event loop. */
async function settles(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return settled;
}

const summary = (message: StreamMessage) => (message.type === 'change' ? `${message.op} ${message.id.slice(-2)}` : message.type);

describe('TimelineStream', () => {
  it('opens with the twin and the reconnection delay, then delivers changes in the order they came', async () => {
    const { stream } = make();
    stream.deliver(change('created', 1, '{"a":1}'));
    stream.deliver(change('updated', 1));
    stream.deliver(change('deleted', 1));
    const messages = await take(stream, 4);
    expect(messages[0]).toEqual({ type: 'opened', twinId: TWIN, retryMs: 2000 });
    expect(messages[1]).toEqual(change('created', 1, '{"a":1}'));
    expect(messages.slice(1).map(summary)).toEqual(['created 01', 'updated 01', 'deleted 01']);
  });

  it('with a filter, leaves out the changes of events of another name or category', async () => {
    const stream = new TimelineStream(tenant, {}, 60_000, async () => [], jest.fn(), logger, undefined, { name: 'walk', category: 'sport' });
    made.push(stream);
    const labelled = (n: number, name = '', category = '') => ({ ...change('updated', n), name, category });
    stream.deliver(labelled(1, 'walk', 'leisure'));
    stream.deliver(labelled(2, 'run', 'sport'));
    stream.deliver(labelled(3));
    stream.deliver(labelled(4, 'walk', 'sport'));
    expect((await take(stream, 2)).map(summary)).toEqual(['opened', 'updated 04']);
  });

  it('a pending next() is answered by the next change', async () => {
    const { stream } = make();
    await take(stream, 1);
    const next = stream.next();
    expect(await settles(next)).toBe(false);
    stream.deliver(change('created', 2));
    expect(await next).toEqual({ value: change('created', 2), done: false });
  });

  it('sends heartbeats on its cadence, whether or not changes are sent', async () => {
    const { stream } = make({ heartbeatMs: 30 });
    await take(stream, 1);
    const started = Date.now();
    const [first] = await take(stream, 1);
    expect(first).toEqual({ type: 'heartbeat', at: expect.any(Date) });
    stream.deliver(change('created', 3));
    const [, second] = await take(stream, 2);
    expect(second.type).toBe('heartbeat');
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('replays as the consumer pulls: one query per batch, the next only once the previous one is taken', async () => {
    const stored = Array.from({ length: REPLAY_BATCH + 3 }, (_, i) => change('updated', i + 1, `{"n":${i + 1}}`));
    const { stream, replayQueries } = make({
      resumeAfter: '0',
      replay: async (after) => stored.filter((row) => Number(row.position) > Number(after)).slice(0, REPLAY_BATCH),
    });
    await take(stream, 1);
    expect(replayQueries).toEqual([]);
    const firstBatch = await take(stream, REPLAY_BATCH);
    expect(replayQueries).toEqual(['0']);
    expect(firstBatch).toEqual(stored.slice(0, REPLAY_BATCH));
    const rest = await take(stream, 3);
    expect(replayQueries).toEqual(['0', String(REPLAY_BATCH)]);
    expect(rest).toEqual(stored.slice(REPLAY_BATCH));
    const live = stream.next();
    expect(await settles(live)).toBe(false);
    expect(replayQueries).toHaveLength(2);
    stream.deliver(change('created', 9000));
    expect(summary((await live).value as StreamMessage)).toBe('created 00');
  });

  it('holds live changes back during the replay and then sends them, minus those the replay already sent (by position)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { stream } = make({
      resumeAfter: '10',
      replay: async () => {
        await gate;
        return [change('created', 1, '{}', 11), change('created', 2, '{}', 12)];
      },
    });
    await take(stream, 1);
    const first = stream.next();
    // Committed while the replay's query ran: position 12 is in its answer, 13 and 14 are not.
    stream.deliver(change('created', 2, '{}', 12));
    stream.deliver(change('updated', 1, '{}', 13));
    stream.deliver(change('created', 3, '{}', 14));
    release();
    const messages = [(await first).value as StreamMessage, ...(await take(stream, 3))];
    expect(messages.map(summary)).toEqual(['created 01', 'created 02', 'updated 01', 'created 03']);
  });

  it('a reset stream says so first, then sends only the changes after the position it continues from', async () => {
    const { stream, replayQueries } = make({ resumeAfter: '99', reset: true });
    stream.deliver(change('created', 1, '{}', 98));
    stream.deliver(change('created', 2, '{}', 100));
    expect(await take(stream, 3)).toEqual([{ type: 'opened', twinId: TWIN, retryMs: 2000 }, { type: 'reset', position: '99' }, change('created', 2, '{}', 100)]);
    expect(replayQueries).toEqual([]);
  });

  it('compares positions as numbers, not as strings', async () => {
    const { stream } = make({ resumeAfter: '9', replay: async () => [] });
    await take(stream, 1);
    stream.deliver(change('created', 1, '{}', 10));
    expect((await take(stream, 1)).map(summary)).toEqual(['created 01']);
  });

  it('a replay that fails is logged and ends the stream after what was queued', async () => {
    const { stream, ended } = make({ resumeAfter: '0', replay: async () => Promise.reject(new Error('database gone')) });
    expect((await take(stream, 1))[0].type).toBe('opened');
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(ended).toHaveBeenCalledWith(stream);
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('database gone'));
  });

  it('a consumer that does not keep up is dropped once the queue is over the limit, and still gets what was queued', async () => {
    const { stream, ended } = make();
    const big = 'x'.repeat(64 * 1024);
    const count = Math.ceil(MAX_QUEUED_BYTES / big.length) + 1;
    for (let i = 0; i < count; i++) stream.deliver(change('created', i, big));
    expect(stream.done).toBe(true);
    expect(ended).toHaveBeenCalledTimes(1);
    stream.deliver(change('created', 9999));
    const messages = await take(stream, count);
    expect(messages[0].type).toBe('opened');
    expect(messages.length).toBe(count);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });

  it('live changes held back during a replay count against the limit too', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { stream, ended } = make({
      resumeAfter: '0',
      replay: async () => {
        await gate;
        return [change('created', 1)];
      },
    });
    await take(stream, 1);
    const first = stream.next();
    const big = 'x'.repeat(64 * 1024);
    for (let i = 0; i <= MAX_QUEUED_BYTES / big.length; i++) stream.deliver(change('created', 100 + i, big));
    expect(stream.done).toBe(true);
    expect(ended).toHaveBeenCalledTimes(1);
    release();
    expect(await first).toEqual({ value: undefined, done: true });
  });

  it('end() (the server shutting down) delivers what is queued, then ends', async () => {
    const { stream, ended } = make();
    stream.deliver(change('created', 4));
    stream.end();
    expect(ended).toHaveBeenCalledWith(stream);
    expect((await take(stream, 2)).map(summary)).toEqual(['opened', 'created 04']);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });

  it('return() (the consumer is gone) ends it at once, also while a next() waits, and stops the heartbeats', async () => {
    const { stream, ended } = make({ heartbeatMs: 20 });
    await take(stream, 1);
    const waiting = stream.next();
    await stream.return();
    await expect(waiting).resolves.toEqual({ value: undefined, done: true });
    expect(ended).toHaveBeenCalledWith(stream);
    await new Promise((resolve) => setTimeout(resolve, 50));
    stream.deliver(change('created', 5));
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });

  it('an aborted signal ends it like return(); an already aborted one ends it before it starts', async () => {
    const controller = new AbortController();
    const { stream, ended } = make({ signal: controller.signal });
    await take(stream, 1);
    const waiting = stream.next();
    controller.abort();
    await expect(waiting).resolves.toEqual({ value: undefined, done: true });
    expect(ended).toHaveBeenCalledTimes(1);

    const aborted = make({ signal: AbortSignal.abort() });
    expect(aborted.stream.done).toBe(true);
    expect(await aborted.stream.next()).toEqual({ value: undefined, done: true });
  });

  it('is its own async iterator: for await ends when the stream does', async () => {
    const { stream } = make();
    stream.deliver(change('created', 6));
    stream.end();
    const seen: string[] = [];
    for await (const message of stream) seen.push(summary(message));
    expect(seen).toEqual(['opened', 'created 06']);
  });
});
