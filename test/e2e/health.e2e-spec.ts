import { migrations } from '../../db/migrations/index';
import { TcpProxy } from '../support/tcp-proxy';
import { TestApp } from '../support/test-app';

const KIND = expect.stringMatching(/^(postgres|embedded)$/);

describe('health probes for orchestrators', () => {
  let service: TestApp;
  beforeAll(async () => {
    service = await TestApp.start();
  });
  afterAll(() => service.close());

  it('GET /health/live: 200 {status: ok}, public, not cached', async () => {
    const response = await service.inject({ method: 'GET', url: '/health/live' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('GET /health/ready: 200 with the database up and every migration applied', async () => {
    const response = await service.inject({ method: 'GET', url: '/health/ready' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: { status: 'up', kind: KIND }, migrations: { status: 'applied' } });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('GET /health/ready: 503 while a migration of this build is not recorded as applied', async () => {
    const last = migrations[migrations.length - 1].name;
    // Hidden for the length of this test only (no other test reads schema_migrations after the global setup).
    await service.dataSource.query(`UPDATE schema_migrations SET name = name || '-hidden' WHERE name = $1`, [last]);
    try {
      const response = await service.inject({ method: 'GET', url: '/health/ready' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ status: 'unavailable', database: { status: 'up', kind: KIND }, migrations: { status: 'pending' } });
      // Liveness does not depend on the schema.
      expect((await service.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    } finally {
      await service.dataSource.query(`UPDATE schema_migrations SET name = $1 WHERE name = $1 || '-hidden'`, [last]);
    }
    expect((await service.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  });

  it('database unreachable: /health/ready 503 (database down), /health/live still 200, /health unchanged', async () => {
    const proxy = TcpProxy.forUrl(process.env.TEST_DATABASE_URL!);
    await proxy.start();
    const cut = await TestApp.start({ DATABASE_URL: proxy.rewrite(process.env.TEST_DATABASE_URL!) });
    try {
      expect((await cut.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
      await proxy.stop();
      const ready = await cut.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'unavailable', database: { status: 'down', kind: KIND }, migrations: { status: 'unknown' } });
      const live = await cut.inject({ method: 'GET', url: '/health/live' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ status: 'ok' });
      const health = await cut.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toEqual({ status: 'unavailable', database: { status: 'down', kind: KIND } });
    } finally {
      await cut.close();
      await proxy.stop();
    }
  });
});
