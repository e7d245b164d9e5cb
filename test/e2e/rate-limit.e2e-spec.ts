import { expectError, TestApp } from '../support/test-app';

describe('rate limits shared across instances (REDIS_URL)', () => {
  it('two instances on one Redis share a token’s budget', async () => {
    // A window long enough that the test cannot straddle two windows by accident.
    const env = { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '3600000', REDIS_COMMAND_TIMEOUT_MS: '2000' };
    const first = await TestApp.start(env);
    const second = await TestApp.start(env);
    try {
      const tenant = await first.tenant();
      const statuses: number[] = [];
      for (const app of [first, second, first]) {
        statuses.push((await app.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })).statusCode);
      }
      expect(statuses).toEqual([200, 200, 200]);
      const refused = await second.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
      expectError(refused, 429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Another token has its own budget.
      const other = await first.tenant();
      expect((await second.inject({ method: 'GET', url: '/organizations/', headers: other.headers() })).statusCode).toBe(200);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
