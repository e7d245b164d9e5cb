import type { LightMyRequestResponse } from 'fastify';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { SseClient } from '../support/sse-client';
import { QuestClient } from '../support/quests';
import { document, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';

/** ETag, If-None-Match, If-Match and compression (docs/API.md, "Conditional requests and compression"). */
describe('HTTP caching: ETags, conditional requests, compression', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let q: QuestClient;
  let twinId: string;
  let eventId: string;

  const send = (method: 'GET' | 'PATCH' | 'DELETE' | 'POST', url: string, headers: Record<string, string> = {}, payload?: unknown) =>
    service.inject({
      method,
      url,
      headers: { ...tenant.headers({ twin: true }), ...(payload ? { 'content-type': JSON_API } : {}), ...headers },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
  const etagOf = (response: LightMyRequestResponse) => {
    if (response.statusCode !== 200) throw new Error(`expected 200, got ${response.statusCode}: ${response.body}`);
    const etag = response.headers.etag;
    expect(etag).toMatch(/^"[\x21\x23-\x7e]+"$/);
    return etag as string;
  };
  const patchTwin = (attributes: Record<string, unknown>, headers: Record<string, string> = {}) =>
    send('PATCH', `/my/twins/${twinId}/`, headers, { data: { type: 'twins', id: twinId, attributes } });
  const patchEvent = (data: Record<string, unknown>, headers: Record<string, string> = {}) =>
    send('PATCH', `/events/${eventId}`, headers, { data: { type: 'events', id: eventId, attributes: { data } } });

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Caching' });
    q = new QuestClient(service);
    const twin = await send('POST', '/my/twins/', {}, { data: { type: 'twins', attributes: { name: 'Cached', description: 'x'.repeat(1500) } } });
    twinId = twin.json().data.id;
    const event = await send('POST', '/events/', {}, { data: { type: 'events', attributes: { name: 'e', category: 'c', data: { n: 1 } } } });
    eventId = event.json().data.id;
  });

  afterAll(() => service.close());

  it('tags every GET of a resource or list and answers a matching If-None-Match with an empty 304', async () => {
    const quest = await q.published(tenant, { name: 'Cached quest' });
    const urls = [
      '/organizations/',
      `/organizations/${tenant.organizationId}`,
      '/twins/',
      `/twins/${twinId}/`,
      '/my/twins/',
      '/events/',
      `/events/${eventId}`,
      '/quests/',
      '/my/quests/',
      `/my/quests/${quest.id}`,
      `/quests/${quest.id}/tasks/`,
      '/my/quests/total_revenue/',
      '/twins/?page_after=',
      `/twins/${twinId}/?fields[twins]=name`,
    ];
    for (const url of urls) {
      const first = await send('GET', url);
      const etag = etagOf(first);
      expect(etagOf(await send('GET', url))).toBe(etag);
      const cached = await send('GET', url, { 'if-none-match': `"other", ${etag}` });
      expect([url, cached.statusCode, cached.body, cached.headers.etag]).toEqual([url, 304, '', etag]);
      expect((await send('GET', url, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    }
    const geo = await send('GET', '/twins/', { accept: 'application/geo+json' });
    expect((await send('GET', '/twins/', { accept: 'application/geo+json', 'if-none-match': etagOf(geo) })).statusCode).toBe(304);
  });

  it('derives a resource\'s tag from its version: a change, another fieldset or a new task at the twin make a new one', async () => {
    const detail = etagOf(await send('GET', `/twins/${twinId}/`));
    const sparse = etagOf(await send('GET', `/twins/${twinId}/?fields[twins]=name`));
    expect(sparse).not.toBe(detail);
    const patched = await patchTwin({ name: 'Cached twice' });
    expect(patched.statusCode).toBe(200);
    const after = etagOf(await send('GET', `/twins/${twinId}/`));
    expect(after).not.toBe(detail);
    expect(patched.headers.etag).toBe(after);
    // tasks_supplied changes without `modified`: the tag still moves.
    const quest = await q.create(tenant, { name: 'With a place' });
    const task = await q.send(tenant, 'POST', `/quests/${quest.id}/tasks/`, { type: 'tasks', attributes: { name: 'Go' }, relationships: { place: { data: { type: 'twins', id: twinId } } } });
    expect(task.statusCode).toBe(201);
    expect(etagOf(await send('GET', `/twins/${twinId}/`))).not.toBe(after);
    // A quest's tag moves when its twin is renamed (its document shows the twin's name).
    const questTag = etagOf(await send('GET', `/my/quests/${quest.id}`));
    await service.dataSource.query(`UPDATE twins SET name = 'Renamed', modified = now() WHERE id = $1`, [tenant.twinId]);
    expect(etagOf(await send('GET', `/my/quests/${quest.id}`))).not.toBe(questTag);
  });

  it('If-Match: the current tag writes, a stale one is a 412 and changes nothing', async () => {
    const current = etagOf(await send('GET', `/twins/${twinId}/`));
    const ok = await patchTwin({ city: 'Lyon' }, { 'if-match': current });
    expect(ok.statusCode).toBe(200);
    const stale = await patchTwin({ city: 'Paris' }, { 'if-match': current });
    expectError(stale, 412, { header: 'If-Match' });
    expect(stale.json().errors[0].code).toBe('precondition_failed');
    expect((await send('GET', `/twins/${twinId}/`)).json().data.attributes.city).toBe('Lyon');
    // A tag of another representation of the same version names that version; a weak tag never matches.
    const sparse = etagOf(await send('GET', `/twins/${twinId}/?fields[twins]=city`));
    expect((await patchTwin({ city: 'Nice' }, { 'if-match': sparse })).statusCode).toBe(200);
    expect((await patchTwin({ city: 'Nantes' }, { 'if-match': `W/${ok.headers.etag}` })).statusCode).toBe(412);
    expect((await patchTwin({ city: 'Lille' }, { 'if-match': '*' })).statusCode).toBe(200);
    expectError(await patchTwin({ city: 'Brest' }, { 'if-match': 'not-a-tag' }), 400, { header: 'If-Match' });
    // An id that is not there stays a 404, with or without a precondition.
    const missing = await send('PATCH', '/my/twins/00000000-0000-4000-8000-000000000000/', { 'if-match': current }, { data: { type: 'twins', attributes: { city: 'x' } } });
    expectError(missing, 404);
  });

  it('If-Match on events (PATCH, DELETE) and quests (PATCH)', async () => {
    const tag = etagOf(await send('GET', `/events/${eventId}`));
    expect((await patchEvent({ n: 2 }, { 'if-match': tag })).statusCode).toBe(200);
    expectError(await patchEvent({ n: 3 }, { 'if-match': tag }), 412, { header: 'If-Match' });
    expectError(await send('DELETE', `/events/${eventId}`, { 'if-match': tag }), 412, { header: 'If-Match' });
    expect((await send('GET', `/events/${eventId}`)).json().data.attributes.data).toEqual({ n: 2 });
    const event = await send('POST', '/events/', {}, { data: { type: 'events', attributes: { name: 'd', category: 'c', data: {} } } });
    const id = event.json().data.id;
    expect((await send('DELETE', `/events/${id}`, { 'if-match': etagOf(await send('GET', `/events/${id}`)) })).statusCode).toBe(204);
    expectError(await send('DELETE', `/events/${id}`, { 'if-match': '*' }), 404);

    const quest = await q.create(tenant, { name: 'Versioned' });
    const questTag = etagOf(await send('GET', `/my/quests/${quest.id}`));
    const patch = (name: string, ifMatch: string) => send('PATCH', `/quests/${quest.id}/`, { 'if-match': ifMatch }, { data: { type: 'quests', id: quest.id, attributes: { name } } });
    const changed = await patch('Versioned 2', questTag);
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).toBe(etagOf(await send('GET', `/my/quests/${quest.id}`)));
    expectError(await patch('Versioned 3', questTag), 412, { header: 'If-Match' });
    expect((await send('GET', `/my/quests/${quest.id}`)).json().data.attributes.name).toBe('Versioned 2');
  });

  it('two writes with the same If-Match at once: one wins, the other is a 412', async () => {
    const tag = etagOf(await send('GET', `/events/${eventId}`));
    const answers = await Promise.all([patchEvent({ race: 'a' }, { 'if-match': tag }), patchEvent({ race: 'b' }, { 'if-match': tag })]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 412]);
  });

  describe('compression', () => {
    it('br and gzip for JSON over 1 KiB, the same document, a tag naming the coding, Vary: Accept-Encoding', async () => {
      const plain = await send('GET', `/twins/${twinId}/`);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/accept-encoding/i);
      for (const [coding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const compressed = await send('GET', `/twins/${twinId}/`, { 'accept-encoding': coding });
        expect(compressed.headers['content-encoding']).toBe(coding);
        expect(compressed.headers.vary).toMatch(/accept-encoding/i);
        expect(JSON.parse(decode(compressed.rawPayload).toString('utf8'))).toEqual(plain.json());
        expect(compressed.headers.etag).toBe(`${(plain.headers.etag as string).slice(0, -1)};${coding}"`);
        // Either tag revalidates either coding.
        expect((await send('GET', `/twins/${twinId}/`, { 'if-none-match': compressed.headers.etag as string })).statusCode).toBe(304);
        expect((await send('GET', `/twins/${twinId}/`, { 'accept-encoding': coding, 'if-none-match': plain.headers.etag as string })).statusCode).toBe(304);
      }
      const small = await send('GET', `/organizations/${tenant.organizationId}`, { 'accept-encoding': 'br, gzip' });
      expect(small.rawPayload.length).toBeLessThan(1024);
      expect(small.headers['content-encoding']).toBeUndefined();
      expect(small.headers.vary).toMatch(/accept-encoding/i);
    });

    it('a page past 64 KiB (sent as bytes) answers as a small one does: its media type, a tag of its body, 304s, both codings', async () => {
      // Twins of the caller's organization whose page is about 100 kB of non-ASCII text.
      const marker = `big-${Date.now()}`;
      for (let i = 0; i < 20; i++) {
        const created = await send('POST', '/my/twins/', {}, { data: { type: 'twins', attributes: { name: `${marker} ${i}`, description: 'é€😀'.repeat(1200) } } });
        expect(created.statusCode).toBe(201);
      }
      const url = `/my/twins/?page_size=100`;
      const plain = await send('GET', url);
      expect(plain.rawPayload.length).toBeGreaterThan(64 * 1024);
      expect(plain.headers['content-type']).toBe('application/vnd.api+json');
      const names = plain.json().data.map((twin: { attributes: { name: string; description: string } }) => twin.attributes);
      expect(names.filter((twin: { name: string }) => twin.name.startsWith(marker))).toHaveLength(20);
      expect(names.find((twin: { name: string }) => twin.name.startsWith(marker)).description).toBe('é€😀'.repeat(1200));
      const etag = etagOf(plain);
      expect((await send('GET', url, { 'if-none-match': etag })).statusCode).toBe(304);
      for (const [coding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const compressed = await send('GET', url, { 'accept-encoding': coding });
        expect(compressed.headers['content-encoding']).toBe(coding);
        expect(decode(compressed.rawPayload).equals(plain.rawPayload)).toBe(true);
        expect(compressed.headers.etag).toBe(`${etag.slice(0, -1)};${coding}"`);
      }
    });

    it('leaves the event stream uncompressed, message by message', async () => {
      const streaming = await TestApp.start();
      try {
        await streaming.app.listen(0, '127.0.0.1');
        const port = (streaming.app.getHttpServer().address() as AddressInfo).port;
        const client = await SseClient.open(port, { ...tenant.headers({ twin: true }), 'accept-encoding': 'br, gzip' });
        expect(client.response.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(client.response.headers['content-encoding']).toBeUndefined();
        await streaming.inject({
          method: 'POST',
          url: '/events/',
          headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API },
          payload: document({ type: 'events', attributes: { name: 'live', category: 'c', data: {} } }),
        });
        await client.until(() => client.messages.some((m) => m.event === 'created'), 'the created message');
        client.close();
      } finally {
        await streaming.close();
      }
    });
  });
});
