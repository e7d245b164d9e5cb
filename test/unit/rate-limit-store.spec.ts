import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import { FailoverStore, type CountingStore, type RedisHealth } from '../../src/common/auth/rate-limit-store';

type Counted = { current: number; ttl: number };
type Behaviour = 'answer' | 'fail' | 'freeze';

/** The shared (Redis) store as the test wants it to behave: answering from its own counter, failing, or frozen. */
class FakeShared implements CountingStore {
  behaviour: Behaviour = 'answer';
  calls = 0;
  private readonly counts = new Map<string, number>();

  incr(key: string, callback: (error: Error | null, result?: Counted) => void, timeWindow: number): void {
    this.calls++;
    if (this.behaviour === 'freeze') return;
    if (this.behaviour === 'fail') return callback(new Error('ECONNRESET'));
    const current = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, current);
    // 1000 + count: a shared answer is told apart from a local one (which counts from 1).
    callback(null, { current: 1000 + current, ttl: timeWindow });
  }
}

class FakeRedis implements RedisHealth {
  status = 'ready';
  pingBehaviour: Behaviour = 'answer';
  pings = 0;

  ping(callback: (error?: Error | null) => void): void {
    this.pings++;
    if (this.pingBehaviour === 'answer') callback(null);
    else if (this.pingBehaviour === 'fail') callback(new Error('ECONNREFUSED'));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BUDGET_MS = 20;
const RETRY_AFTER_MS = 100;

describe('FailoverStore (shared counts in Redis, per-instance counts while it is down)', () => {
  let redis: FakeRedis;
  let shared: FakeShared;
  let store: FailoverStore;
  let logs: string[];

  beforeEach(() => {
    redis = new FakeRedis();
    shared = new FakeShared();
    logs = [];
    store = new FailoverStore(redis, shared, new LocalStore(false, false, 100), {
      budgetMs: BUDGET_MS,
      retryAfterMs: RETRY_AFTER_MS,
      log: { warn: (message) => logs.push(`warn ${message}`), log: (message) => logs.push(`log ${message}`) },
    });
  });
  afterEach(() => store.close());

  const count = (key = 'token-a') =>
    new Promise<{ current: number; ms: number }>((resolve, reject) => {
      const started = Date.now();
      store.incr(key, (error, result) => (error ? reject(error) : resolve({ current: result!.current, ms: Date.now() - started })), 60_000, 10);
    });

  it('counts in Redis while it answers', async () => {
    expect((await count()).current).toBe(1001);
    expect((await count()).current).toBe(1002);
    expect(store.degraded).toBe(false);
    expect(logs).toEqual([]);
  });

  it('counts per instance (not nothing) once Redis fails, without asking it again until the retry', async () => {
    shared.behaviour = 'fail';
    expect((await count()).current).toBe(1);
    expect(store.degraded).toBe(true);
    expect((await count()).current).toBe(2);
    expect((await count()).current).toBe(3);
    expect(shared.calls).toBe(1);
    expect(logs).toEqual([`warn Redis unavailable for rate limiting (ECONNRESET); counting per instance, retrying in ${RETRY_AFTER_MS} ms`]);
  });

  it('a frozen Redis costs one request the budget, the following ones nothing', async () => {
    shared.behaviour = 'freeze';
    const first = await count();
    expect(first.current).toBe(1);
    expect(first.ms).toBeGreaterThanOrEqual(BUDGET_MS - 1);
    // Bounded, not exact: a busy CI machine delays the timer by hundreds of ms; a frozen Redis without the budget never answers.
    expect(first.ms).toBeLessThan(BUDGET_MS + 5_000);
    const second = await count();
    expect(second.current).toBe(2);
    expect(second.ms).toBeLessThan(BUDGET_MS * 10);
    expect(shared.calls).toBe(1);
    expect(logs[0]).toContain(`did not answer within ${BUDGET_MS} ms`);
  });

  it('goes back to Redis after REDIS_RETRY_AFTER_MS once it answers a PING', async () => {
    shared.behaviour = 'fail';
    await count();
    shared.behaviour = 'answer';
    await sleep(RETRY_AFTER_MS / 2);
    // Before the retry: still local, even though Redis would answer now.
    expect((await count()).current).toBe(2);
    expect(redis.pings).toBe(0);
    await sleep(RETRY_AFTER_MS);
    expect(redis.pings).toBe(1);
    expect(store.degraded).toBe(false);
    expect((await count()).current).toBe(1001);
    expect(logs[1]).toBe('log Redis answers again: rate limits are shared across instances');
  });

  it('stays local while the PING fails or is not answered, and keeps trying', async () => {
    shared.behaviour = 'fail';
    await count();
    redis.pingBehaviour = 'fail';
    // Two retries, a RETRY_AFTER_MS apart: waited for, as a busy CI machine runs timers late.
    for (const deadline = Date.now() + 5_000; redis.pings < 2 && Date.now() < deadline; ) await sleep(10);
    expect(redis.pings).toBe(2);
    expect(store.degraded).toBe(true);
    redis.pingBehaviour = 'freeze';
    // A frozen PING is given at least a second before the next retry is scheduled.
    await sleep(RETRY_AFTER_MS * 1.5);
    expect(store.degraded).toBe(true);
    expect((await count()).current).toBe(2);
    expect(shared.calls).toBe(1);
  });

  it('counts locally while not connected, without marking Redis down', async () => {
    redis.status = 'connecting';
    expect((await count()).current).toBe(1);
    expect(shared.calls).toBe(0);
    expect(store.degraded).toBe(false);
    redis.status = 'ready';
    expect((await count()).current).toBe(1001);
  });

  it('keeps the counts of different keys apart in either store', async () => {
    shared.behaviour = 'fail';
    await count('a');
    await count('a');
    expect((await count('b')).current).toBe(1);
    expect((await count('a')).current).toBe(3);
  });

  it('markDown (an ioredis error event) switches to local counts before any request failed', async () => {
    store.markDown(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect((await count()).current).toBe(1);
    expect(shared.calls).toBe(0);
    // Repeated error events (ioredis reconnecting) log once.
    store.markDown(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(logs).toHaveLength(1);
  });

  it('refuses per-route stores, which it cannot keep apart', () => {
    expect(() => store.child()).toThrow('per-route rate limits are not supported');
  });
});
