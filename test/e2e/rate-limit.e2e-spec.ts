import { expectError, TestApp, TestTenant } from '../support/test-app';
import { TcpProxy } from '../support/tcp-proxy';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// A window long enough that a test cannot straddle two windows by accident.
const WINDOW = { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '3600000' };

const get = (app: TestApp, who: TestTenant) => app.inject({ method: 'GET', url: '/organizations/', headers: who.headers() });
/** `r` of the RateLimit field: what is left of the token's budget. */
const remaining = (response: { headers: Record<string, unknown> }) => /;r=(\d+);/.exec(String(response.headers.ratelimit))?.[1];

describe('rate limits shared across instances (REDIS_URL)', () => {
  it('two instances on one Redis share a token’s budget', async () => {
    const env = { ...WINDOW, REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: '2000' };
    const first = await TestApp.start(env);
    const second = await TestApp.start(env);
    try {
      const tenant = await first.tenant();
      const answers = [];
      for (const app of [first, second, first]) answers.push(await get(app, tenant));
      expect(answers.map((response) => response.statusCode)).toEqual([200, 200, 200]);
      expect(answers.map(remaining)).toEqual(['2', '1', '0']);
      expect(answers[0].headers['ratelimit-policy']).toBe('"token";q=3;w=3600');
      const refused = await get(second, tenant);
      expectError(refused, 429);
      expect(refused.json().errors[0].code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
      // Another token has its own budget.
      const other = await first.tenant();
      const otherAnswer = await get(second, other);
      expect(otherAnswer.statusCode).toBe(200);
      expect(remaining(otherAnswer)).toBe('2');
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('Redis unreachable: limits are enforced per instance, not lifted', async () => {
    // Nothing listens on port 1: connections are refused at once.
    const app = await TestApp.start({ ...WINDOW, REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const tenant = await app.tenant();
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(app, tenant)).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await app.close();
    }
  });

  it('Redis frozen: per-instance limits without waiting on it; shared again once it answers', async () => {
    const target = new URL(REDIS_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    const env = { ...WINDOW, REDIS_URL: proxy.rewrite(REDIS_URL), REDIS_COMMAND_TIMEOUT_MS: '50', REDIS_RETRY_AFTER_MS: '200' };
    const first = await TestApp.start(env);
    const second = await TestApp.start(env);
    try {
      const tenant = await first.tenant();
      expect(remaining(await get(first, tenant))).toBe('2');

      proxy.freeze();
      const started = Date.now();
      const frozen = [];
      for (let i = 0; i < 4; i++) frozen.push(await get(first, tenant));
      // The first request waits out the 50 ms budget, the others not at all (far under a second each).
      expect(Date.now() - started).toBeLessThan(1000);
      // Counted on this instance alone, from zero: the shared count (1) is out of reach, the limit is not lifted.
      expect(frozen.map((response) => response.statusCode)).toEqual([200, 200, 200, 429]);
      expect(frozen.slice(0, 3).map(remaining)).toEqual(['2', '1', '0']);
      // The other instance has its own per-instance count.
      expect((await get(second, tenant)).statusCode).toBe(200);

      proxy.thaw();
      // Back after REDIS_RETRY_AFTER_MS through a background PING (a PING held by the freeze is answered now).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const fresh = await first.tenant();
      const shared = [];
      for (const app of [first, second, first]) shared.push(await get(app, fresh));
      expect(shared.map(remaining)).toEqual(['2', '1', '0']);
      expectError(await get(second, fresh), 429);
    } finally {
      await second.close();
      await first.close();
      await proxy.stop();
    }
  });
});
