import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Metrics } from '../../src/common/metrics/metrics';
import { MetricsServer } from '../../src/common/metrics/metrics-server';
import { SseClient } from '../support/sse-client';
import { embeddedDatabase, TestApp, TestTenant } from '../support/test-app';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = `${name}${labels ? `{${labels}}` : ''} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('Prometheus metrics on METRICS_PORT', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let metricsPort: number;
  const scrape = async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  beforeAll(async () => {
    metricsPort = await freePort();
    service = await TestApp.start({ METRICS_PORT: String(metricsPort), HOST: '127.0.0.1', EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres', EVENT_STREAM_HEARTBEAT_MS: '100' });
    tenant = await service.tenant();
  });
  afterAll(() => service?.close());

  it('request durations by method, route template and status; never the raw URL', async () => {
    for (let i = 0; i < 3; i++) await service.inject({ method: 'GET', url: `/twins/${tenant.twinId}/`, headers: tenant.headers() });
    await service.inject({ method: 'GET', url: '/organizations/' });
    await service.inject({ method: 'GET', url: `/no/such/${tenant.twinId}` });
    const text = await scrape();
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/twins/:id",status="200"')).toBe(3);
    expect(sample(text, 'http_request_duration_seconds_bucket', 'le="+Inf",method="GET",route="/twins/:id",status="200"')).toBe(3);
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/organizations",status="401"')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(text).not.toContain(tenant.twinId);
  });

  it('database pool, event-loop lag, open event streams and the Node defaults', async () => {
    const port = await (async () => {
      await service.app.listen(0, '127.0.0.1');
      return (service.app.getHttpServer().address() as AddressInfo).port;
    })();
    const before = await scrape();
    expect(sample(before, 'event_streams_open')).toBe(0);
    const client = await SseClient.open(port, tenant.headers({ twin: true }));
    try {
      expect(client.response.statusCode).toBe(200);
      let during = await scrape();
      for (let i = 0; i < 40 && sample(during, 'event_streams_open') !== 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        during = await scrape();
      }
      expect(sample(during, 'event_streams_open')).toBe(1);
      expect(sample(during, 'db_pool_connections', 'state="total"')).toBeGreaterThanOrEqual(1);
      expect(sample(during, 'db_pool_connections', 'state="idle"')).toBeGreaterThanOrEqual(0);
      // Queries waiting for a pool connection: a count (0 on an idle pool; the test machine may be busy).
      expect(Number.isInteger(sample(during, 'db_pool_waiting_requests'))).toBe(true);
      expect(sample(during, 'db_pool_waiting_requests')).toBeGreaterThanOrEqual(0);
      expect(sample(during, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(during).toContain('process_cpu_user_seconds_total');
      expect(during).toContain('nodejs_heap_size_used_bytes');
    } finally {
      client.close();
    }
  });

  it('modules register their own series on the shared registry (Metrics)', async () => {
    const metrics = service.app.get(Metrics);
    const counter = metrics.counter({ name: 'test_deliveries_total', help: 'a module’s counter', labelNames: ['outcome'] });
    counter.inc({ outcome: 'delivered' }, 2);
    let depth = 7;
    metrics.gauge({ name: 'test_queue_depth', help: 'a module’s gauge', collect() { this.set(depth); } });
    let text = await scrape();
    expect(sample(text, 'test_deliveries_total', 'outcome="delivered"')).toBe(2);
    expect(sample(text, 'test_queue_depth')).toBe(7);
    depth = 3;
    text = await scrape();
    expect(sample(text, 'test_queue_depth')).toBe(3);
  });

  it('not on the API port; closed with the application', async () => {
    const onApi = await service.inject({ method: 'GET', url: '/metrics' });
    expect(onApi.statusCode).toBe(404);
    const other = await fetch(`http://127.0.0.1:${metricsPort}/other`);
    expect(other.status).toBe(404);
    const closing = await TestApp.start({ METRICS_PORT: String(await freePort()), HOST: '127.0.0.1' });
    const port = closing.config.metricsPort;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await closing.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('METRICS_PORT=0: no listener', async () => {
    const off = await TestApp.start();
    try {
      expect(off.app.get(MetricsServer).port).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});
