import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Metrics } from '../../src/common/metrics/metrics';
import { WebhookWorker } from '../../src/webhooks/webhook-worker';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { document, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, type TestTenant } from '../support/test-app';

/** A public address that needs no DNS (the URL checks resolve names; an IP literal is its own answer). */
const PUBLIC_URL = 'https://93.184.215.14/hooks';

interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** A partner's endpoint: `answer` decides each request's fate (status, or a delay first). */
class Receiver {
  readonly received: Received[] = [];
  private server!: Server;
  constructor(private readonly answer: (request: number, res: ServerResponse) => unknown = (_, res) => res.writeHead(204).end()) {}

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString(), at: Date.now() });
        void this.answer(this.received.length, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const eventResource = (id: string) => ({ type: 'events', id, attributes: { name: 'walk', category: 'activity', data: { steps: 1 } } });

/** A committed change, as the events, twins and quests code writes it (the outbox trigger takes it from there). */
async function insertChange(service: TestApp, tenant: TestTenant, kind = 'event.created', subject = randomUUID()) {
  const resource = JSON.stringify(eventResource(subject));
  const rows: { position: string; changed: string }[] = await service.dataSource.query(
    `INSERT INTO changes (organization_id, twin_id, kind, subject_id, name, category, resource) VALUES ($1, $2, $3, $4, 'walk', 'activity', $5) RETURNING position, changed`,
    [tenant.organizationId, tenant.twinId, kind, subject, resource],
  );
  return { subject, resource, ...rows[0] };
}

async function createWebhook(service: TestApp, tenant: TestTenant, attributes: Record<string, unknown>) {
  const response = await service.inject({ method: 'POST', url: '/webhooks/', headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: document({ type: 'webhooks', attributes }) });
  if (response.statusCode !== 201) throw new Error(`create webhook: ${response.statusCode} ${response.body}`);
  return response.json().data as { id: string; attributes: { secret: string } };
}

async function attempts(service: TestApp, tenant: TestTenant, webhookId: string) {
  const response = await service.inject({ method: 'GET', url: `/webhooks/${webhookId}/deliveries/`, headers: tenant.headers() });
  expect(response.statusCode).toBe(200);
  return response.json().data as { attributes: Record<string, unknown> }[];
}

describe('webhooks: managing them', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Webhook partner' });
    other = await service.tenant({ organization: 'Another partner' });
  });

  afterAll(async () => {
    await service?.close();
  });

  const send = (method: 'POST' | 'PATCH', url: string, data: Record<string, unknown>, who = tenant) =>
    service.inject({ method, url, headers: { ...who.headers(), 'content-type': JSON_API }, payload: document(data) });

  it('creates, shows the secret once, lists, changes, rotates and deletes', async () => {
    const created = await send('POST', '/webhooks/', { type: 'webhooks', attributes: { url: PUBLIC_URL, events: ['event.created', 'twin.updated'], description: 'Sync' } });
    expect(created.statusCode).toBe(201);
    const data = created.json().data;
    expect(data).toEqual({
      type: 'webhooks',
      id: expect.any(String),
      attributes: {
        url: PUBLIC_URL,
        events: ['event.created', 'twin.updated'],
        description: 'Sync',
        enabled: true,
        'previous-secret-expires': null,
        created: expect.stringMatching(MICROSECOND_TIMESTAMP),
        modified: expect.stringMatching(MICROSECOND_TIMESTAMP),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      },
    });
    const id = data.id as string;

    const shown = await service.inject({ method: 'GET', url: `/webhooks/${id}`, headers: tenant.headers() });
    expect(shown.statusCode).toBe(200);
    expect(shown.json().data.attributes).not.toHaveProperty('secret');
    expect(shown.body).not.toContain(data.attributes.secret);
    const listed = await service.inject({ method: 'GET', url: '/webhooks/', headers: tenant.headers() });
    expect(listed.json().data.map((item: { id: string }) => item.id)).toEqual([id]);
    expect(listed.json().meta).toEqual({ pagination: { page: 1, pages: 1, count: 1 } });
    expect(listed.body).not.toContain('whsec_');
    expect(listed.json().data[0].attributes).not.toHaveProperty('secret');

    const changed = await send('PATCH', `/webhooks/${id}`, { type: 'webhooks', id, attributes: { enabled: false, events: ['quest.published'] } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data.attributes).toEqual(expect.objectContaining({ url: PUBLIC_URL, enabled: false, events: ['quest.published'], description: 'Sync' }));
    expect(changed.json().data.attributes).not.toHaveProperty('secret');

    const rotated = await service.inject({ method: 'POST', url: `/webhooks/${id}/rotate-secret`, headers: tenant.headers() });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().data.attributes.secret).toMatch(/^whsec_/);
    expect(rotated.json().data.attributes.secret).not.toBe(data.attributes.secret);
    expect(rotated.json().data.attributes['previous-secret-expires']).toBeNull();

    const deleted = await service.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: tenant.headers() });
    expect(deleted.statusCode).toBe(204);
    expectError(await service.inject({ method: 'GET', url: `/webhooks/${id}`, headers: tenant.headers() }), 404);
  });

  it.each([
    ['not a URL', { url: 'partner hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['http', { url: 'http://93.184.215.14/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['loopback', { url: 'https://127.0.0.1/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['a name resolving to loopback', { url: 'https://localhost/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['private', { url: 'https://10.1.2.3/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['cloud metadata', { url: 'https://169.254.169.254/latest', events: ['event.created'] }, '/data/attributes/url'],
    ['IPv4-mapped IPv6 loopback', { url: 'https://[::ffff:127.0.0.1]/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['credentials in the URL', { url: 'https://user:pw@93.184.215.14/hooks', events: ['event.created'] }, '/data/attributes/url'],
    ['an unknown event type', { url: PUBLIC_URL, events: ['event.created', 'twin.deleted'] }, '/data/attributes/events'],
    ['no event type', { url: PUBLIC_URL, events: [] }, '/data/attributes/events'],
    ['an unknown attribute', { url: PUBLIC_URL, events: ['event.created'], secret: 'whsec_mine' }, '/data/attributes/secret'],
  ])('refuses %s with a 400 on its pointer, and stores nothing', async (_, attributes, pointer) => {
    const response = await send('POST', '/webhooks/', { type: 'webhooks', attributes });
    const error = expectError(response, 400, { pointer });
    expect(error.code).toBe('invalid_document');
    const listed = await service.inject({ method: 'GET', url: '/webhooks/', headers: tenant.headers() });
    expect(listed.json().data).toEqual([]);
  });

  it('a rotation with an overlap shows until when the replaced secret signs; a later rotation without one ends it; bad values are 400s', async () => {
    const webhook = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['event.created'] });
    const rotate = (query: string) => service.inject({ method: 'POST', url: `/webhooks/${webhook.id}/rotate-secret${query}`, headers: tenant.headers() });
    const before = Date.now();
    const overlapping = await rotate('?previous_secret_expires_in=3600');
    expect(overlapping.statusCode).toBe(200);
    const expires = overlapping.json().data.attributes['previous-secret-expires'];
    expect(expires).toMatch(MICROSECOND_TIMESTAMP);
    expect(Date.parse(expires) - before).toBeGreaterThan(3_590_000);
    expect(Date.parse(expires) - before).toBeLessThan(3_610_000);
    const shown = await service.inject({ method: 'GET', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
    expect(shown.json().data.attributes['previous-secret-expires']).toBe(expires);

    for (const query of ['?previous_secret_expires_in=-1', '?previous_secret_expires_in=86401', '?previous_secret_expires_in=soon', '?grace=10']) {
      const refused = expectError(await rotate(query), 400);
      expect(refused.code).toBe('invalid_parameter');
    }
    // Refused rotations changed nothing.
    const unchanged = await service.inject({ method: 'GET', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
    expect(unchanged.json().data.attributes['previous-secret-expires']).toBe(expires);

    const ended = await rotate('');
    expect(ended.json().data.attributes['previous-secret-expires']).toBeNull();
    await service.inject({ method: 'DELETE', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
  });

  it('refuses a private URL on PATCH too, leaving the webhook as it was', async () => {
    const webhook = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['event.created'] });
    expectError(await send('PATCH', `/webhooks/${webhook.id}`, { type: 'webhooks', id: webhook.id, attributes: { url: 'https://192.168.1.1/x' } }), 400, { pointer: '/data/attributes/url' });
    const shown = await service.inject({ method: 'GET', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
    expect(shown.json().data.attributes.url).toBe(PUBLIC_URL);
    await service.inject({ method: 'DELETE', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
  });

  it("never shows or touches another organization's webhook: 404 everywhere", async () => {
    const webhook = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['event.created'] });
    const id = webhook.id;
    expectError(await service.inject({ method: 'GET', url: `/webhooks/${id}`, headers: other.headers() }), 404);
    expectError(await send('PATCH', `/webhooks/${id}`, { type: 'webhooks', id, attributes: { enabled: false } }, other), 404);
    expectError(await service.inject({ method: 'POST', url: `/webhooks/${id}/rotate-secret`, headers: other.headers() }), 404);
    expectError(await service.inject({ method: 'GET', url: `/webhooks/${id}/deliveries/`, headers: other.headers() }), 404);
    expectError(await service.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: other.headers() }), 404);
    expect((await service.inject({ method: 'GET', url: '/webhooks/', headers: other.headers() })).json().data).toEqual([]);
    expect((await service.inject({ method: 'GET', url: `/webhooks/${id}`, headers: tenant.headers() })).json().data.attributes.enabled).toBe(true);
    expectError(await service.inject({ method: 'GET', url: '/webhooks/', headers: { authorization: tenant.headers().authorization } }), 400);
    await service.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: tenant.headers() });
  });

  it('queues a change in its own transaction: once per subscribed, enabled webhook, the exact body; nothing when rolled back', async () => {
    const subscribed = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['event.created'] });
    const otherKind = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['twin.updated'] });
    const disabled = await createWebhook(service, tenant, { url: PUBLIC_URL, events: ['event.created'] });
    await send('PATCH', `/webhooks/${disabled.id}`, { type: 'webhooks', id: disabled.id, attributes: { enabled: false } });
    const foreign = await createWebhook(service, other, { url: PUBLIC_URL, events: ['event.created'] });
    const ids = [subscribed.id, otherKind.id, disabled.id, foreign.id];
    const queued = () =>
      service.dataSource.query(`SELECT webhook_id, kind, body, state, attempts FROM webhook_deliveries WHERE webhook_id = ANY($1::uuid[])`, [ids]) as Promise<Record<string, unknown>[]>;

    const runner = service.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query(`INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource) VALUES ($1, $2, 'event.created', $3, '{}')`, [tenant.organizationId, tenant.twinId, randomUUID()]);
    await runner.rollbackTransaction();
    await runner.release();
    expect(await queued()).toEqual([]);

    const change = await insertChange(service, tenant);
    const rows = await queued();
    expect(rows).toEqual([{ webhook_id: subscribed.id, kind: 'event.created', body: expect.any(String), state: 'pending', attempts: 0 }]);
    const body = rows[0].body as string;
    expect(body).toBe(`{"type":"event.created","timestamp":"${change.changed}","data":${change.resource}}`);
    expect(change.changed).toMatch(MICROSECOND_TIMESTAMP);
    for (const id of ids) await service.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: (id === foreign.id ? other : tenant).headers() });
  });
});

describe('webhooks: delivering', () => {
  const TIMEOUT_MS = 1500;
  let service: TestApp;
  let tenant: TestTenant;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    service = await TestApp.start({
      WEBHOOKS_WORKER: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_RETRY_BASE_MS: '50',
      WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOKS_POLL_MS: '100',
    });
  });

  beforeEach(async () => {
    // An organization per test: its webhooks receive only its own changes.
    tenant = await service.tenant({ organization: 'Delivery partner' });
  });

  afterEach(async () => {
    // Each test starts on an idle worker: attempts a test left in flight (a dead receiver holds its
    // slot for the whole timeout) would otherwise take the next test's slots and its timing with them.
    await service.dataSource.query(`UPDATE webhooks SET enabled = false`);
    const worker = service.app.get(WebhookWorker);
    await until('no attempt in flight', () => (worker.busy === 0 ? true : undefined), TIMEOUT_MS + 5000);
  });

  afterAll(async () => {
    await service?.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  const receiver = async (answer?: ConstructorParameters<typeof Receiver>[0]) => {
    const started = await new Receiver(answer).start();
    receivers.push(started);
    return started;
  };

  it('POSTs {type, timestamp, data} signed as Standard Webhooks, and logs the attempt', async () => {
    const endpoint = await receiver();
    const webhook = await createWebhook(service, tenant, { url: endpoint.url, events: ['event.created', 'event.deleted'] });
    const change = await insertChange(service, tenant);
    const [delivery] = await until('the delivery', () => (endpoint.received.length > 0 ? endpoint.received : undefined));

    const verified = new Webhook(webhook.attributes.secret).verify(delivery.body, delivery.headers);
    expect(verified).toEqual({ type: 'event.created', timestamp: change.changed, data: eventResource(change.subject) });
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(delivery.body, delivery.headers)).toThrow();

    const log = await until('the attempt in the log', async () => {
      const found = await attempts(service, tenant, webhook.id);
      return found.length > 0 ? found : undefined;
    });
    expect(log).toEqual([
      {
        type: 'webhook-deliveries',
        id: expect.any(String),
        attributes: {
          'webhook-id': delivery.headers['webhook-id'],
          'event-type': 'event.created',
          attempt: 1,
          'status-code': 204,
          error: null,
          'duration-ms': expect.any(Number),
          attempted: expect.stringMatching(MICROSECOND_TIMESTAMP),
        },
      },
    ]);
    expect(endpoint.received).toHaveLength(1);
  });

  it("delivers a moving twin's twin.moved and its geofence crossings, signed, each body its change as committed", async () => {
    const endpoint = await receiver();
    const webhook = await createWebhook(service, tenant, { url: endpoint.url, events: ['twin.moved', 'geofence.entered', 'geofence.exited'] });
    const json = { ...tenant.headers(), 'content-type': JSON_API };
    const ring = [[10, 10], [11, 10], [11, 11], [10, 11], [10, 10]];
    const fence = await service.inject({ method: 'POST', url: '/geofences/', headers: json, payload: document({ type: 'geofences', attributes: { name: 'Yard', geometry: { type: 'Polygon', coordinates: [ring] } } }) });
    expect(fence.statusCode).toBe(201);
    const minute = 60_000;
    const at = (minutes: number) => new Date(Math.floor(Date.now() / minute) * minute + minutes * minute).toISOString();
    const upload = (positions: [number, number, string][]) =>
      service.inject({
        method: 'POST',
        url: `/twins/${tenant.twinId}/positions`,
        headers: json,
        payload: JSON.stringify({ data: positions.map(([lon, lat, occurred]) => ({ type: 'positions', attributes: { coordinates: [lon, lat], occurred } })) }),
      });
    // Into the yard and out again in one upload, then a later move that crosses nothing.
    expect((await upload([[9.5, 10.5, at(-5)], [10.5, 10.5, at(-4)], [11.5, 10.5, at(-3)]])).statusCode).toBe(200);
    expect((await upload([[12, 12, at(-1)]])).statusCode).toBe(200);

    const committed: { kind: string; resource: string }[] = await service.dataSource.query(
      `SELECT kind, resource FROM changes WHERE twin_id = $1 AND kind IN ('twin.moved', 'geofence.entered', 'geofence.exited') ORDER BY position`,
      [tenant.twinId],
    );
    expect(committed.map((change) => change.kind).sort()).toEqual(['geofence.entered', 'geofence.exited', 'twin.moved', 'twin.moved']);
    const received = await until('every change delivered', () => (endpoint.received.length >= committed.length ? endpoint.received : undefined));
    const bodies = received.map((delivery) => new Webhook(webhook.attributes.secret).verify(delivery.body, delivery.headers) as { type: string; data: unknown });
    // Each change once, its body the resource as committed (deliveries of one webhook may arrive in any order).
    const key = (change: { type: string; data: unknown }) => `${change.type} ${JSON.stringify(change.data)}`;
    expect(bodies.map(key).sort()).toEqual(committed.map((change) => key({ type: change.kind, data: JSON.parse(change.resource) })).sort());
    const moved = bodies.filter((body) => body.type === 'twin.moved').map((body) => (body.data as { attributes: { coordinates: number[] } }).attributes.coordinates);
    expect(moved.sort()).toEqual([[11.5, 10.5], [12, 12]].sort());
    const crossing = bodies.find((body) => body.type === 'geofence.entered')!.data as { attributes: { category: string; data: { geofence: string; coordinates: number[] } } };
    expect(crossing.attributes.category).toBe('geofence');
    expect(crossing.attributes.data).toEqual({ twin: tenant.twinId, geofence: fence.json().data.id, coordinates: [10.5, 10.5] });
  });

  it('during a rotation\'s overlap signs with both secrets, so either verifies; after it, with the new one only', async () => {
    const endpoint = await receiver();
    const webhook = await createWebhook(service, tenant, { url: endpoint.url, events: ['event.created'] });
    const oldSecret = webhook.attributes.secret;
    const rotated = await service.inject({ method: 'POST', url: `/webhooks/${webhook.id}/rotate-secret?previous_secret_expires_in=1.5`, headers: tenant.headers() });
    const newSecret = rotated.json().data.attributes.secret as string;
    await insertChange(service, tenant);
    const [during] = await until('the delivery during the overlap', () => (endpoint.received.length > 0 ? endpoint.received : undefined));
    expect(during.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2} v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(new Webhook(newSecret).verify(during.body, during.headers)).toMatchObject({ type: 'event.created' });
    expect(new Webhook(oldSecret).verify(during.body, during.headers)).toMatchObject({ type: 'event.created' });

    await until('the overlap to end', async () => {
      const shown = await service.inject({ method: 'GET', url: `/webhooks/${webhook.id}`, headers: tenant.headers() });
      return shown.json().data.attributes['previous-secret-expires'] === null || undefined;
    });
    await insertChange(service, tenant);
    const [, after] = await until('the delivery after the overlap', () => (endpoint.received.length > 1 ? endpoint.received : undefined));
    expect(after.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(new Webhook(newSecret).verify(after.body, after.headers)).toMatchObject({ type: 'event.created' });
    expect(() => new Webhook(oldSecret).verify(after.body, after.headers)).toThrow();
  });

  it('retries a receiver that fails three times: the 4th attempt delivers, with the same webhook-id and body', async () => {
    const endpoint = await receiver((n, res) => res.writeHead(n <= 3 ? 503 : 200).end());
    const webhook = await createWebhook(service, tenant, { url: endpoint.url, events: ['event.created'] });
    await insertChange(service, tenant);
    await until('four attempts', () => endpoint.received.length >= 4 || undefined);
    const log = await until('four logged attempts', async () => {
      const found = await attempts(service, tenant, webhook.id);
      return found.length === 4 ? found : undefined;
    });
    expect(log.map((item) => [item.attributes.attempt, item.attributes['status-code']])).toEqual([
      [4, 200],
      [3, 503],
      [2, 503],
      [1, 503],
    ]);
    expect(new Set(endpoint.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(endpoint.received.map((r) => r.body)).size).toBe(1);
    for (const r of endpoint.received) expect(() => new Webhook(webhook.attributes.secret).verify(r.body, r.headers)).not.toThrow();
    // Backoff: the gaps grow (50 ms base, doubling, with jitter in the upper half of each step).
    const gaps = endpoint.received.slice(1).map((r, i) => r.at - endpoint.received[i].at);
    expect(gaps[0]).toBeGreaterThanOrEqual(20);
    expect(gaps[2]).toBeGreaterThanOrEqual(100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(endpoint.received).toHaveLength(4);
    const [state] = await service.dataSource.query(`SELECT state, next_attempt FROM webhook_deliveries WHERE webhook_id = $1`, [webhook.id]);
    expect(state).toEqual({ state: 'delivered', next_attempt: null });
  });

  it('gives up on a receiver that does not answer within the timeout, logging the timeout', async () => {
    const endpoint = await receiver(() => undefined);
    const webhook = await createWebhook(service, tenant, { url: endpoint.url, events: ['event.created'] });
    await insertChange(service, tenant);
    const log = await until('a timed-out attempt', async () => {
      const found = await attempts(service, tenant, webhook.id);
      return found.length > 0 ? found : undefined;
    });
    expect(log[0].attributes).toEqual(expect.objectContaining({ attempt: 1, 'status-code': null, error: `timed out after ${TIMEOUT_MS} ms` }));
    expect(log[0].attributes['duration-ms']).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(log[0].attributes['duration-ms']).toBeLessThan(TIMEOUT_MS + 1000);
  });

  it('records a connection error as an attempt', async () => {
    const endpoint = await receiver();
    const url = endpoint.url;
    await endpoint.close();
    receivers.splice(receivers.indexOf(endpoint), 1);
    const webhook = await createWebhook(service, tenant, { url, events: ['event.created'] });
    await insertChange(service, tenant);
    const log = await until('a failed attempt', async () => {
      const found = await attempts(service, tenant, webhook.id);
      return found.length > 0 ? found : undefined;
    });
    expect(log[0].attributes).toEqual(expect.objectContaining({ 'status-code': null, error: expect.stringMatching(/ECONNREFUSED/) }));
  });

  it('a slow receiver does not delay another one', async () => {
    const slow = await receiver((_, res) => void setTimeout(() => res.writeHead(200).end(), TIMEOUT_MS - 300));
    const fast = await receiver();
    await createWebhook(service, tenant, { url: slow.url, events: ['event.created'] });
    await createWebhook(service, tenant, { url: fast.url, events: ['event.created'] });
    // Several changes, so the slow receiver has more queued than one attempt.
    const started = Date.now();
    for (let i = 0; i < 3; i++) await insertChange(service, tenant);
    await until('the fast receiver got all three', () => fast.received.length >= 3 || undefined);
    const fastDone = Date.now() - started;
    await until('the slow receiver got all three', () => slow.received.length >= 3 || undefined);
    expect(fastDone).toBeLessThan(TIMEOUT_MS - 300);
    expect(slow.received.length).toBe(3);
  });

  it('many dead receivers with backlogs (more than all the slots) take turns with a live one, not precedence', async () => {
    // Receivers that never answer: each attempt holds its slot for the whole timeout.
    const dead = await receiver(() => undefined);
    const live = await receiver();
    const busy = await service.tenant({ organization: 'Many dead receivers' });
    for (let i = 0; i < 12; i++) await createWebhook(service, busy, { url: `${dead.url}/${i}`, events: ['event.created'] });
    await createWebhook(service, tenant, { url: live.url, events: ['event.created'] });
    // 12 × 20 due rows, older than the live one's: 96 could be in flight (8 per receiver), the worker has 64 slots.
    await service.dataSource.query(
      `INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
       SELECT $1, NULL, 'event.created', gen_random_uuid(), '{"type":"events"}' FROM generate_series(1, 20)`,
      [busy.organizationId],
    );
    await until('the dead receivers hold the slots', () => (dead.received.length >= 64 ? true : undefined));
    const started = Date.now();
    await insertChange(service, tenant);
    await until('the live receiver got its change', () => live.received.length >= 1 || undefined);
    // It waited at most for slots to free (one timeout), not for the backlogs.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
  });

  it('finished deliveries and attempts past the retention are pruned; pending ones and recent ones stay', async () => {
    const hook = await createWebhook(service, tenant, { url: 'http://127.0.0.1:9/never', events: ['event.created'] });
    await service.dataSource.query(`UPDATE webhooks SET enabled = false WHERE id = $1`, [hook.id]);
    // Four deliveries of the (disabled, so never attempted) webhook, as the outbox trigger writes them.
    const rows: { id: string }[] = await service.dataSource.query(
      `INSERT INTO webhook_deliveries (organization_id, webhook_id, position, kind, body, created)
       SELECT $2, $1, n, 'event.created', '{}', now() + n * interval '1 microsecond' FROM generate_series(1, 4) n RETURNING id`,
      [hook.id, tenant.organizationId],
    );
    const [oldDelivered, oldFailed, oldPending, recentDelivered] = rows.map((row) => row.id);
    await service.dataSource.query(`UPDATE webhook_deliveries SET state = 'delivered', created = now() - interval '40 days' WHERE id = $1`, [oldDelivered]);
    await service.dataSource.query(`UPDATE webhook_deliveries SET state = 'failed', created = now() - interval '40 days' WHERE id = $1`, [oldFailed]);
    await service.dataSource.query(`UPDATE webhook_deliveries SET created = now() - interval '40 days' WHERE id = $1`, [oldPending]);
    await service.dataSource.query(`UPDATE webhook_deliveries SET state = 'delivered' WHERE id = $1`, [recentDelivered]);
    await service.dataSource.query(
      `INSERT INTO webhook_attempts (organization_id, webhook_id, delivery_id, kind, attempt, status_code, duration_ms, attempted)
       VALUES ($4, $1, $2, 'event.created', 1, 500, 3, now() - interval '40 days'), ($4, $1, $3, 'event.created', 1, 200, 3, now())`,
      [hook.id, oldDelivered, recentDelivered, tenant.organizationId],
    );
    expect(await service.app.get(WebhooksRepository).pruneFinished(30)).toBeGreaterThanOrEqual(3);
    const left: { id: string }[] = await service.dataSource.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, [hook.id]);
    expect(left.map((row) => row.id).sort()).toEqual([oldPending, recentDelivered].sort());
    expect((await attempts(service, tenant, hook.id)).map((attempt) => attempt.attributes['status-code'])).toEqual([200]);
  });

  it('a backlog of one receiver (far more due rows than slots) does not hide another receiver\'s rows', async () => {
    const slow = await receiver((_, res) => void setTimeout(() => res.writeHead(200).end(), TIMEOUT_MS - 300));
    const fast = await receiver();
    const busy = await service.tenant({ organization: 'Backlogged partner' });
    await createWebhook(service, busy, { url: slow.url, events: ['event.created'] });
    await createWebhook(service, tenant, { url: fast.url, events: ['event.created'] });
    // 400 changes for the slow receiver, queued before the fast one's single change.
    await service.dataSource.query(
      `INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
       SELECT $1, NULL, 'event.created', gen_random_uuid(), '{"type":"events"}' FROM generate_series(1, 400)`,
      [busy.organizationId],
    );
    const started = Date.now();
    await insertChange(service, tenant);
    await until('the fast receiver got its change', () => fast.received.length >= 1 || undefined);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    // The slow receiver is being served meanwhile, within its own slots.
    expect(slow.received.length).toBeGreaterThan(0);
  });
});

describe('webhooks: every event type, from the real routes', () => {
  let service: TestApp;
  let partner: TestTenant;
  let embarker: TestTenant;
  let receiver: Receiver;
  let embarkReceiver: Receiver;

  beforeAll(async () => {
    service = await TestApp.start({ WEBHOOKS_WORKER: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '100' });
    partner = await service.tenant({ organization: 'Every type partner', twin: 'Typed' });
    embarker = await service.tenant({ organization: 'Embarking org', twin: 'Embarker' });
    receiver = await new Receiver().start();
    embarkReceiver = await new Receiver().start();
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await embarkReceiver?.close();
  });

  const send = (method: 'POST' | 'PATCH' | 'DELETE', url: string, data: Record<string, unknown> | undefined, who = partner, twin = true) =>
    service.inject({ method, url, headers: { ...who.headers({ twin }), ...(data ? { 'content-type': JSON_API } : {}) }, ...(data ? { payload: document(data) } : {}) });

  it('each change of the organization is delivered once, signed, with the resource as committed; nothing of others', async () => {
    const all = ['event.created', 'event.updated', 'event.deleted', 'twin.created', 'twin.updated', 'quest.published', 'quest.embarked'];
    const webhook = await createWebhook(service, partner, { url: receiver.url, events: all });
    // The embark is a change of the embarking twin's organization: its hook hears of it, the partner's does not.
    const embarkHook = await createWebhook(service, embarker, { url: embarkReceiver.url, events: ['quest.embarked'] });

    const created = (await send('POST', '/events/', { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 1 } } })).json().data;
    const updated = (await send('PATCH', `/events/${created.id}`, { type: 'events', id: created.id, attributes: { data: { steps: 2 } } })).json().data;
    expect((await send('DELETE', `/events/${created.id}`, undefined)).statusCode).toBe(204);
    const batch = await service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...partner.headers({ twin: true }), 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
      payload: JSON.stringify({ 'atomic:operations': [1, 2].map((n) => ({ op: 'add', data: { type: 'events', attributes: { name: `batch ${n}`, category: 'activity', data: { n } } } })) }),
    });
    expect(batch.statusCode).toBe(200);
    // A batch that fails leaves no delivery behind.
    const failed = await service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...partner.headers({ twin: true }), 'content-type': 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"' },
      payload: JSON.stringify({ 'atomic:operations': [{ op: 'add', data: { type: 'events', attributes: { name: 'lost', category: 'activity', data: {} } } }, { op: 'remove', ref: { type: 'events', id: randomUUID() } }] }),
    });
    expect(failed.statusCode).toBe(404);
    const twin = (await send('POST', '/my/twins/', { type: 'twins', attributes: { name: 'Hooked twin' } }, partner, false)).json().data;
    const twinUpdated = (await send('PATCH', `/my/twins/${twin.id}`, { type: 'twins', id: twin.id, attributes: { description: 'Now described' } }, partner, false)).json().data;
    await service.dataSource.query(`UPDATE twins SET public = true WHERE id = $1`, [partner.twinId]);
    const quest = (await send('POST', '/quests/', { type: 'quests', attributes: { name: 'Hooked quest' } })).json().data;
    expect((await send('PATCH', `/quests/${quest.id}/`, { type: 'quests', id: quest.id, attributes: { public: true } })).statusCode).toBe(200);
    // Changing a public quest publishes nothing new.
    expect((await send('PATCH', `/quests/${quest.id}/`, { type: 'quests', id: quest.id, attributes: { public: true, summary: 'Still public' } })).statusCode).toBe(200);
    const embarked = await send('POST', `/quests/${quest.id}/embark/`, undefined, embarker);
    expect(embarked.statusCode).toBe(201);

    await until('the partner\'s 8 deliveries', () => (receiver.received.length >= 8 ? true : undefined));
    await until('the embark delivery', () => (embarkReceiver.received.length >= 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const verify = (secret: string, deliveries: Received[]) =>
      deliveries.map((delivery) => new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; timestamp: string; data: Record<string, unknown> });
    // Deliveries to one receiver run concurrently (up to WEBHOOKS_PER_RECEIVER): their order is not the changes'.
    const payloads = verify(webhook.attributes.secret, receiver.received);
    const key = (payload: { type: string; data: Record<string, unknown> }) => `${payload.type} ${String(payload.data.id)} ${JSON.stringify(payload.data)}`;
    const expected = [
      { type: 'event.created', data: created },
      { type: 'event.updated', data: updated },
      { type: 'event.deleted', data: { type: 'events', id: created.id } },
      ...batch.json()['atomic:results'].map((result: { data: Record<string, unknown> }) => ({ type: 'event.created', data: result.data })),
      { type: 'twin.created', data: payloads.find((payload) => payload.type === 'twin.created')?.data ?? {} },
      { type: 'twin.updated', data: twinUpdated },
      { type: 'quest.published', data: payloads.find((payload) => payload.type === 'quest.published')?.data ?? {} },
    ];
    expect(payloads.map(key).sort()).toEqual(expected.map(key).sort());
    expect(payloads.find((payload) => payload.type === 'twin.created')!.data).toEqual(expect.objectContaining({ type: 'twins', id: twin.id }));
    expect(payloads.find((payload) => payload.type === 'quest.published')!.data).toEqual(
      expect.objectContaining({ type: 'quests', id: quest.id, attributes: expect.objectContaining({ public: true }) }),
    );
    expect(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(receiver.received.length);
    const [embark] = verify(embarkHook.attributes.secret, embarkReceiver.received);
    expect(embarkReceiver.received).toHaveLength(1);
    expect(embark).toEqual({ type: 'quest.embarked', timestamp: expect.any(String), data: embarked.json().data });

    // What an operator sees: the attempts by outcome (the shared test database may hold other tests'
    // rows, which this instance's worker also serves), and the queue's depth.
    const exposition = await service.app.get(Metrics).registry.metrics();
    expect(Number(/^webhook_delivery_attempts_total\{outcome="delivered"\} (\d+)$/m.exec(exposition)?.[1])).toBeGreaterThanOrEqual(9);
    expect(exposition).toMatch(/^webhook_queue_depth \d+$/m);
  });
});
