import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportFigures } from './support/figures';
import { freePort, PgCluster } from './support/pg-cluster';
import { distDir, ServiceProcess, sleep } from './support/service-process';

/**
 * OpenTelemetry on the built service: with OTEL_EXPORTER_OTLP_ENDPOINT unset not one module of the
 * SDK is loaded; set to a local HTTP receiver, spans of the HTTP server, the Fastify route and the pg
 * queries arrive there (OTLP/HTTP JSON at /v1/traces).
 */
const OTEL_MODULE = /[/\\]node_modules[/\\](@opentelemetry|@fastify[/\\]otel)[/\\]/;
/**
 * The no-op API package alone is no SDK: prom-client's default metrics load it (optionally, for
 * exemplars) whatever tracing does. SDK, exporter and instrumentations are what must stay out.
 */
const OTEL_SDK_MODULE = (file: string) => OTEL_MODULE.test(file) && !/[/\\]@opentelemetry[/\\]api[/\\]/.test(file);

describe('faults: OpenTelemetry tracing (built service)', () => {
  let cluster: PgCluster;
  let folder: string;

  beforeAll(async () => {
    cluster = await PgCluster.create();
    await cluster.createDatabase('tracing');
    folder = mkdtempSync(join(tmpdir(), 'twin-tracing-'));
  });
  afterAll(async () => {
    await cluster?.destroy();
    rmSync(folder, { recursive: true, force: true });
  });

  async function run(env: Record<string, string>, name: string, requests: (port: number) => Promise<void>): Promise<string[]> {
    const modulesFile = join(folder, `${name}.modules`);
    const port = await freePort();
    const service = await ServiceProcess.start({
      port,
      databaseUrl: cluster.url('tracing'),
      env: { ...env, LOADED_MODULES_FILE: modulesFile, NODE_OPTIONS: `--require ${join(__dirname, 'support', 'loaded-modules.cjs')}` },
    });
    try {
      await requests(port);
    } finally {
      const exit = await service.stop();
      expect(exit.code).toBe(0);
    }
    return readFileSync(modulesFile, 'utf8').split('\n');
  }

  it('OTEL_EXPORTER_OTLP_ENDPOINT unset: no OpenTelemetry module is loaded', async () => {
    const loaded = await run({}, 'off', async (port) => {
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    });
    // The list is real: the service's own CommonJS modules and pg are in it.
    expect(loaded.some((file) => file.includes(join('node_modules', 'pg', 'lib')))).toBe(true);
    expect(loaded.filter(OTEL_SDK_MODULE)).toEqual([]);
  });

  it("answers without loading Node's bundled undici (nothing here uses it; a lazy global of Node's pulls 0.8 MB of source in)", async () => {
    const loaded = await run({}, 'undici', async (port) => {
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/twins/`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/map`, { headers: { 'accept-encoding': 'gzip' } })).status).toBe(200);
    });
    // The list is real: Node's own HTTP server is in it.
    expect(loaded).toContain('node:internal _http_server');
    expect(loaded.filter((entry) => entry.includes('undici'))).toEqual([]);
  });

  it("answers without ICU's locale data: no Intl formatter or collation (megabytes of the node binary paged in for good)", async () => {
    const loaded = await run({}, 'icu', async (port) => {
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/twins/`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/docs-json`)).status).toBe(200);
    });
    // The list is real: the service's modules are in it.
    expect(loaded.some((file) => file.includes(join('dist', 'src', 'main.js')))).toBe(true);
    expect(loaded.filter((entry) => entry.startsWith('icu '))).toEqual([]);
  });

  it("is built without the code it never runs: TypeORM's query runners of other databases, libphonenumber-js", () => {
    const bundle = readFileSync(join(distDir(), 'src', 'main.js'), 'utf8');
    const queryRunners = [...bundle.matchAll(/\b(\w+QueryRunner)=class\b/g)].map((match) => match[1]).sort();
    // The list is real: the PostgreSQL one is in it.
    expect(queryRunners).toEqual(['BaseQueryRunner', 'PostgresQueryRunner']);
    expect(bundle).not.toMatch(/libphonenumber-js[/\\]|parsePhoneNumber/);
  });

  it('set to a local OTLP/HTTP receiver: spans of the request, the route and its SQL arrive', async () => {
    const bodies: string[] = [];
    const receiver: Server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (request.url === '/v1/traces') bodies.push(body);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    let firstSpansMs = 0;
    try {
      const loaded = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, 'on', async (port) => {
        const sent = Date.now();
        expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
        for (let waited = 0; waited < 10_000 && !bodies.some((body) => body.includes('/health/ready')); waited += 100) await sleep(100);
        firstSpansMs = Date.now() - sent;
      });
      expect(loaded.some(OTEL_SDK_MODULE)).toBe(true);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
    const spans = bodies.flatMap((body) => {
      const document = JSON.parse(body) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: { name: string }[] }[] }[] };
      return document.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => `${scope.scope.name}: ${span.name}`)));
    });
    reportFigures('tracing', { 'request -> its spans at the receiver ms': firstSpansMs, spans: spans.length });
    expect(spans).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^@opentelemetry\/instrumentation-http: GET/),
        expect.stringMatching(/^@fastify\/otel: /),
        expect.stringMatching(/^@opentelemetry\/instrumentation-pg: /),
      ]),
    );
    expect(bodies.join('')).toContain('twin-service');
  });
});
