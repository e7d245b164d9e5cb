import { createHash } from 'node:crypto';
import { gif, jpeg, png, webpExtended, webpLossless, webpLossy } from '../support/images';
import { QuestClient } from '../support/quests';
import { expectError, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('images: upload checks, metadata, content, caching and visibility', () => {
  let service: TestApp;
  let q: QuestClient;
  let alpha: TestTenant;
  let beta: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    q = new QuestClient(service);
    alpha = await service.tenant({ organization: 'Images alpha' });
    beta = await service.tenant({ organization: 'Images beta' });
  });
  afterAll(() => service.close());

  const get = (tenant: TestTenant, url: string, headers: Record<string, string> = {}) =>
    service.inject({ method: 'GET', url, headers: { ...tenant.headers(), ...headers } });

  describe('POST /images/', () => {
    it.each([
      ['image/png', png(3, 2), 3, 2],
      ['image/gif', gif(640, 480), 640, 480],
      ['image/jpeg', jpeg(1024, 768), 1024, 768],
      ['image/webp', webpLossy(300, 200), 300, 200],
      ['image/webp', webpLossless(31, 17), 31, 17],
      ['image/webp', webpExtended(4000, 3000), 4000, 3000],
    ])('201 for %s, measured from its header (%#)', async (type, bytes, width, height) => {
      const response = await q.upload(alpha, type, bytes);
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      const data = response.json().data;
      expect(Object.keys(data).sort()).toEqual(['attributes', 'id', 'type']);
      expect(data.type).toBe('images');
      expect(Object.keys(data.attributes).sort()).toEqual(['content-type', 'created', 'height', 'size', 'url', 'width']);
      expect(data.attributes).toEqual({
        'content-type': type,
        size: bytes.length,
        width,
        height,
        url: expect.stringMatching(new RegExp(`^http://localhost(:80)?/images/${data.id}/content$`)),
        created: expect.stringMatching(MICROSECOND_TIMESTAMP),
      });
    });

    it('needs no X-Twin, but a token and an organization', async () => {
      const response = await service.inject({ method: 'POST', url: '/images', headers: { authorization: `Token ${alpha.token}`, 'content-type': 'image/png' }, payload: png() });
      expectError(response, 400, { header: 'X-Organization' });
      const anonymous = await service.inject({ method: 'POST', url: '/images/', headers: { 'content-type': 'image/png' }, payload: png() });
      expectError(anonymous, 401);
    });

    it('400 when the bytes are not the declared format (wrong magic bytes)', async () => {
      expect(expectError(await q.upload(alpha, 'image/png', Buffer.from('definitely not an image')), 400).code).toBe('invalid_image');
      const mismatch = expectError(await q.upload(alpha, 'image/png', gif()), 400);
      expect(mismatch.detail).toMatch(/image\/gif/);
      expectError(await q.upload(alpha, 'image/jpeg', png()), 400);
      expectError(await q.upload(alpha, 'image/webp', Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1')), 400);
    });

    it('400 for a truncated or empty-image header', async () => {
      expectError(await q.upload(alpha, 'image/png', png().subarray(0, 20)), 400);
      expectError(await q.upload(alpha, 'image/jpeg', jpeg().subarray(0, 20)), 400);
      expectError(await q.upload(alpha, 'image/gif', gif(0, 1)), 400);
      expectError(await q.upload(alpha, 'image/png', Buffer.alloc(0)), 400);
    });

    it('415 for other media types', async () => {
      for (const type of ['image/svg+xml', 'image/bmp', 'text/plain', 'application/octet-stream']) {
        expectError(await q.upload(alpha, type, png()), 415);
      }
      const json = await service.inject({
        method: 'POST',
        url: '/images/',
        headers: { ...alpha.headers(), 'content-type': 'application/json' },
        payload: JSON.stringify({ data: { type: 'images' } }),
      });
      expectError(json, 415, { header: 'Content-Type' });
    });

    it('413 over 5 MiB; exactly 5 MiB is accepted', async () => {
      const limit = 5 * 1024 * 1024;
      const big = Buffer.alloc(limit + 1);
      png(100, 100).copy(big);
      expectError(await q.upload(alpha, 'image/png', big), 413);
      const exact = Buffer.alloc(limit);
      png(100, 100).copy(exact);
      const accepted = await q.upload(alpha, 'image/png', exact);
      expect(accepted.statusCode).toBe(201);
      expect(accepted.json().data.attributes.size).toBe(limit);
    });
  });

  describe('GET /images/<IMG_ID>/ and /content', () => {
    it('metadata, and the bytes with their type, ETag and caching headers; If-None-Match → 304', async () => {
      const bytes = jpeg(20, 10);
      const image = await q.image(alpha, 'image/jpeg', bytes);

      for (const url of [`/images/${image.id}/`, `/images/${image.id}`]) {
        const meta = await get(alpha, url);
        expect(meta.statusCode).toBe(200);
        expect(meta.json().data).toEqual(image);
      }

      const content = await get(alpha, `/images/${image.id}/content`);
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toBe('image/jpeg');
      expect(content.rawPayload.equals(bytes)).toBe(true);
      const etag = `"${createHash('sha256').update(bytes).digest('hex')}"`;
      expect(content.headers.etag).toBe(etag);
      expect(content.headers['cache-control']).toBe('private, max-age=86400');
      expect(content.headers['content-length']).toBe(String(bytes.length));

      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await get(alpha, `/images/${image.id}/content`, { 'if-none-match': header });
        expect(cached.statusCode).toBe(304);
        expect(cached.rawPayload.length).toBe(0);
        expect(cached.headers.etag).toBe(etag);
      }
      const stale = await get(alpha, `/images/${image.id}/content`, { 'if-none-match': '"stale"' });
      expect(stale.statusCode).toBe(200);
      expect(stale.rawPayload.equals(bytes)).toBe(true);
    });

    it('404 for unknown ids and non-UUIDs', async () => {
      expectError(await get(alpha, `/images/${MISSING}/`), 404);
      expectError(await get(alpha, `/images/${MISSING}/content`), 404);
      expectError(await get(alpha, `/images/nope/content`), 404);
    });

    it('another organization cannot read an image, until a public quest uses it', async () => {
      const image = await q.image(alpha, 'image/png', png(8, 8));
      expectError(await get(beta, `/images/${image.id}/`), 404);
      expectError(await get(beta, `/images/${image.id}/content`), 404);

      // Used by a quest that is not public: still private.
      const quest = await q.create(alpha, { name: 'Pictured', 'summary-image': image.id });
      expectError(await get(beta, `/images/${image.id}/content`), 404);

      await q.patch(alpha, quest.id, { public: true });
      const meta = await get(beta, `/images/${image.id}/`);
      expect(meta.statusCode).toBe(200);
      const content = await get(beta, `/images/${image.id}/content`);
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toBe('image/png');

      await q.patch(alpha, quest.id, { public: false });
      expectError(await get(beta, `/images/${image.id}/content`), 404);
      // Its own organization always reads it.
      expect((await get(alpha, `/images/${image.id}/content`)).statusCode).toBe(200);
    });

    it('another organization\'s image cannot become a summary image', async () => {
      const image = await q.image(alpha, 'image/png', png());
      expectError(await q.send(beta, 'POST', '/quests/', { type: 'quests', attributes: { name: 'Borrowed', 'summary-image': image.id } }), 400, {
        pointer: '/data/attributes/summary-image',
      });
    });

    it('a tenant header for an organization the account is not a member of is a 403', async () => {
      const image = await q.image(alpha, 'image/png', png());
      const response = await service.inject({
        method: 'GET',
        url: `/images/${image.id}/content`,
        headers: { authorization: `Token ${beta.token}`, 'x-organization': alpha.organizationId },
      });
      expectError(response, 403, { header: 'X-Organization' });
    });
  });
});
