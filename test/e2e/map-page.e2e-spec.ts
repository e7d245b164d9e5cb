import { randomInt } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { MAP_PAGE_POLICY } from '../../src/common/http/content-security-policy';
import { launchChromium, recordPolicyViolations } from '../support/browser';
import { document, JSON_API, TestApp, TestTenant } from '../support/test-app';

// Functions evaluated in the page reach the map as `globalThis.twinMap` (the test compiles without the DOM's types).
interface Rendered {
  cluster?: boolean;
  count?: number;
  name?: string;
  id?: string;
  lngLat: [number, number];
}

/** Web Mercator: a longitude/latitude as fractions of the world's square (x east, y south), and back. */
const toWorld = ([lon, lat]: number[]) => [(lon + 180) / 360, (1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2];
const fromWorld = ([x, y]: number[]): [number, number] => [x * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - 2 * y))) * 180) / Math.PI];

/**
 * Where this run puts its twins: the scene is drawn near Reykjavik (zoom-8 tile 112/67), moved by whole
 * zoom-8 tiles to a tile of its own. Public twins are everyone's, and the database may hold other
 * files' and earlier runs' (a developer's test database lives on), so counts are exact only where no
 * one else has twins; whole tiles keep which tile and which cluster cell each twin falls in at the
 * zooms the test looks at (8 and more). MAP_SCREENSHOT=1 draws it at Reykjavik itself, over land.
 */
const TILE = process.env.MAP_SCREENSHOT === '1' ? [112, 67] : [randomInt(0, 256), randomInt(40, 216)];
const place = (lon: number, lat: number): [number, number] => {
  const [x, y] = toWorld([lon, lat]);
  return fromWorld([x + (TILE[0] - 112) / 256, y + (TILE[1] - 67) / 256]);
};

/**
 * The map page in a real headless Chromium against the real service on a port: a refused sign-in,
 * sign-in, tiles load, clusters and points render (read back from the map), the cluster labels and the
 * keyboard list, a popup, a twin's track (its line read back from the map, none offered for another
 * organization's twin, a failure, the cap), the organization's geofences (read back from the map, named
 * in a popup) and a twin's crossings of them in its popup (none asked for another organization's twin),
 * a filter changes what is shown, a phone-sized viewport,
 * sign-out, a reload from the browser's cache; and no request leaves the service's origin. MAP_SCREENSHOT=1 also writes
 * docs/map.png (run it on the embedded database: `MAP_SCREENSHOT=1 TEST_DATABASE_URL= npx jest …`).
 */
describe('the map page in a browser', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const requests: string[] = [];
  const answers: { url: string; status: number }[] = [];
  /** The Content-Security-Policy of each answer the browser got, by path. */
  const policies = new Map<string, string | undefined>();
  const pageErrors: string[] = [];
  /** The Content-Security-Policy violations of the whole session (none is expected). */
  let violations: string[];

  const create = (attributes: Record<string, unknown>) => service.createTwin(tenant, attributes);

  /**
   * Waits until the map is at rest with its tiles loaded (none waiting to be asked for again after a
   * 503: the map is aria-busy then) and the page has handled `idle`.
   */
  const settled = async () => {
    await page.waitForFunction(
      () => {
        const map = (globalThis as any).twinMap;
        return map.loaded() && map.areTilesLoaded() && !map.isMoving() && map.getContainer().getAttribute('aria-busy') !== 'true';
      },
      undefined,
      { timeout: 30_000 },
    );
    // One more frame and its `idle`: the page's own `idle` handler (labels, the list) has run by then.
    await page.evaluate(() => {
      const map = (globalThis as any).twinMap;
      const idle = map.once('idle');
      map.triggerRepaint();
      return idle.then(() => undefined);
    });
  };

  /** What the map renders now, once it is at rest. */
  const rendered = async (): Promise<Rendered[]> => {
    await settled();
    return page.evaluate(() => {
      const map = (globalThis as any).twinMap;
      if (!map.getLayer('points')) return [];
      return map
        .queryRenderedFeatures({ layers: ['clusters', 'points'] })
        .map((f: { properties: Rendered; geometry: { coordinates: [number, number] } }) => ({ ...f.properties, lngLat: f.geometry.coordinates })) as Rendered[];
    });
  };

  /** Each feature once (a feature can be drawn from two tiles). */
  const distinct = (features: Rendered[]) => [...new Map(features.map((f) => [f.cluster ? f.lngLat.join() : f.id, f])).values()];

  beforeAll(async () => {
    // Few features per tile, so a city of twins is clusters at first and points when zoomed in.
    service = await TestApp.start({ TILE_MAX_FEATURES: '20' });
    await service.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await service.tenant({ organization: 'Map page' });
    // A dense square of 60 (every other one public), a looser group of 16 to the west, and three apart:
    // up to zoom 11 the groups' twins share cells of the tiles' grid (clusters), the three are alone (points).
    const at = (lon: number, lat: number) => ({ type: 'Point', coordinates: place(lon, lat) });
    for (let i = 0; i < 60; i++) await create({ name: `Square ${i}`, public: i % 2 === 0, location: at(-21.9 + (i % 10) * 0.002, 64.14 + Math.floor(i / 10) * 0.002) });
    for (let i = 0; i < 16; i++) await create({ name: `Bay ${i}`, location: at(-22.03 + (i % 4) * 0.004, 64.12 + Math.floor(i / 4) * 0.003) });
    await create({ name: 'Harbour', public: true, location: at(-21.8, 64.2) });
    await create({ name: 'Lighthouse', location: at(-21.75, 64.21) });
    await create({ name: 'Tea house', location: at(-21.7, 64.19), personality: { services: ['tea'] } });

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    violations = await recordPolicyViolations(page);
    page.on('request', (request) => requests.push(request.url()));
    page.on('response', (response) => {
      answers.push({ url: response.url(), status: response.status() });
      policies.set(new URL(response.url()).pathname, response.headers()['content-security-policy']);
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // The browser's own complaints (an invalid pattern attribute, a failed module), but not its note of each HTTP error, checked below.
    page.on('console', (message) => message.type() === 'error' && !message.text().startsWith('Failed to load resource') && pageErrors.push(message.text()));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('shows the refusal of a wrong token, and keeps nothing', async () => {
    await page.goto(`${origin}/map`);
    await page.fill('#token', 'not-a-token');
    await page.fill('#organization', tenant.organizationId);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#status.error', { timeout: 30_000 });
    expect(await page.textContent('#status')).toMatch(/^The service refused \(401\)/);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('twin-map-token'))).toBeNull();
    expect(await page.isVisible('#sign-in')).toBe(true);
  });

  it('signs in with the token and organization kept in session storage, never in the URL, and fits the map to the twins', async () => {
    await page.fill('#token', tenant.token);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#filters:not([hidden])', { timeout: 30_000 });
    expect(page.url()).toBe(`${origin}/map`);
    expect(await page.evaluate(() => [(globalThis as any).sessionStorage.getItem('twin-map-token'), (globalThis as any).sessionStorage.getItem('twin-map-organization')])).toEqual([tenant.token, tenant.organizationId]);
    expect(requests.some((url) => url.includes(tenant.token))).toBe(false);
    expect(await page.inputValue('#token')).toBe('');

    // Every twin the tenant sees is on screen (other test files' public twins too, when they share the database).
    const tileJson = (await service.inject({ method: 'GET', url: '/twins/tiles.json', headers: tenant.headers() })).json();
    const features = distinct(await rendered());
    const [west, south, east, north] = tileJson.bounds as number[];
    expect(await page.evaluate(([w, s, e, n]) => {
      const bounds = (globalThis as any).twinMap.getBounds();
      return bounds.contains([w, s]) && bounds.contains([e, n]);
    }, [west, south, east, north])).toBe(true);
    const total = features.reduce((sum, f) => sum + (f.cluster ? Number(f.count) : 1), 0);
    expect(features.some((f) => f.cluster && Number(f.count) > 1)).toBe(true);
    expect(total).toBeGreaterThanOrEqual(79);
  });

  it('is served under a strict Content-Security-Policy: the page, its files, and the worker MapLibre starts from its own file', async () => {
    expect(MAP_PAGE_POLICY).toBe(
      "default-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; script-src 'self'; worker-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'",
    );
    const files = ['/map', ...['map.js', 'map.css', 'maplibre-gl.mjs', 'maplibre-gl.css', 'maplibre-gl-worker.mjs', 'countries.geojson'].map((name) => `/map/assets/${name}`)];
    expect(files.map((path) => [path, policies.get(path)])).toEqual(files.map((path) => [path, MAP_PAGE_POLICY]));
    // The worker runs from its file on this origin (a blob: or data: worker would need worker-src to allow it).
    expect([...new Set(page.workers().map((worker) => new URL(worker.url()).pathname))]).toEqual(['/map/assets/maplibre-gl-worker.mjs']);
    // The page holds no inline script (no import map: map.js names MapLibre's versioned URL itself).
    expect(await page.locator('script').evaluateAll((scripts) => scripts.map((script) => [(script as any).type, (script as any).getAttribute('src'), (script as any).text.trim()]))).toEqual([
      ['module', expect.stringMatching(/^\/map\/assets\/map\.js\?v=\w+$/), ''],
    ]);
  });

  it('labels the clusters with their counts, and lists what is in view as buttons', async () => {
    await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 10 }), place(-21.86, 64.165));
    const features = distinct(await rendered());
    const clusters = features.filter((f) => f.cluster);
    const points = features.filter((f) => !f.cluster);
    expect(clusters.length).toBeGreaterThan(0);
    // The three apart are points, and so is a twin of the looser group alone in its cell of a tile's grid.
    expect(points.map((f) => f.name)).toEqual(expect.arrayContaining(['Harbour', 'Lighthouse', 'Tea house']));
    expect(points.every((f) => ['Harbour', 'Lighthouse', 'Tea house'].includes(f.name as string) || /^Bay \d+$/.test(f.name as string))).toBe(true);
    // The labels (clusters whose circles overlap share one) add up to the clusters' counts; with the points, every twin.
    const labels = (await page.locator('.cluster-label').allTextContents()).map(Number);
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.reduce((a, b) => a + b, 0)).toBe(clusters.reduce((sum, f) => sum + Number(f.count), 0));
    expect(labels.reduce((a, b) => a + b, 0) + points.length).toBe(79);
    const buttons = await page.locator('#in-view button').allTextContents();
    expect(buttons.filter((text) => /^\d+ twins? here/.test(text))).toHaveLength(labels.length);
    expect(buttons).toEqual(expect.arrayContaining(['Harbour', 'Lighthouse', 'Tea house']));

    if (process.env.MAP_SCREENSHOT === '1') {
      // The README's picture: the two groups as clusters, the three others as points.
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 8 }), place(-21.86, 64.165));
      await settled();
      await page.screenshot({ path: join(__dirname, '..', '..', 'docs', 'map.png') });
    }
  });

  it('zooms into a cluster from the keyboard (Enter on its button), keeping the focus in the list', async () => {
    const zoom = await page.evaluate(() => (globalThis as any).twinMap.getZoom() as number);
    await page.locator('#in-view button', { hasText: /twins? here/ }).first().focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((before) => (globalThis as any).twinMap.getZoom() > before + 2.5, zoom, { timeout: 10_000 });
    await settled();
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.closest('#in-view') !== null)).toBe(true);
  });

  it('shows points when zoomed in, and opens a popup with the name and a link to the twin', async () => {
    await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 11 }), place(-21.75, 64.205));
    const lighthouse = (await rendered()).find((f) => f.name === 'Lighthouse');
    expect(lighthouse).toBeDefined();
    const position = await page.evaluate((lighthouseAt) => {
      const map = (globalThis as any).twinMap;
      const point = map.project(lighthouseAt);
      const box = map.getContainer().getBoundingClientRect();
      return { x: box.left + point.x, y: box.top + point.y };
    }, place(-21.75, 64.21));
    await page.mouse.click(position.x, position.y);
    const popup = page.locator('.maplibregl-popup-content');
    await popup.waitFor({ timeout: 10_000 });
    expect(await popup.locator('strong').textContent()).toBe('Lighthouse');
    expect(await popup.locator('p').textContent()).toBe('Not public · not a supplier');
    expect(await popup.locator('a').getAttribute('href')).toBe(`/twins/${lighthouse!.id}/`);
    // The link shows the twin fetched with the credentials.
    await popup.locator('a').click();
    await popup.locator('pre:not([hidden])').waitFor({ timeout: 10_000 });
    expect(await popup.locator('pre').textContent()).toContain('"name": "Lighthouse"');
  });

  describe("a twin's track", () => {
    const MINUTE = 60_000;
    /** Six positions of the last hour, north-east in steps of about 200 m (rounded to what the database keeps exactly), the newest five minutes ago. */
    const path = Array.from({ length: 6 }, (_, i) => place(-21.6 + i * 0.004, 64.3 + i * 0.002).map((v) => Math.round(v * 1e6) / 1e6) as [number, number]);
    let times: string[];
    let courier: string;
    let neighbour: string;
    let elsewhere: TestTenant;
    const popup = () => page.locator('.maplibregl-popup-content');
    /** Opens a twin's popup from the "In view" list, as a keyboard user would. */
    const select = async (name: string) => {
      await page.locator('#in-view button', { hasText: new RegExp(`^${name}$`) }).click();
      await popup().locator('strong', { hasText: name }).waitFor({ timeout: 10_000 });
    };
    const trackRequests = (twin: string) => requests.filter((url) => url.startsWith(`${origin}/twins/${twin}/track`)).map((url) => new URL(url));
    /** The track's two sources as the map holds them. */
    const trackOnMap = () =>
      page.evaluate(async () => {
        const map = (globalThis as any).twinMap;
        if (!map.getSource('track')) return undefined;
        return {
          layer: { type: map.getLayer('track-line')?.type, source: map.getLayer('track-line')?.source },
          line: (await map.getSource('track').getData()).features.map((f: { geometry: unknown }) => f.geometry),
          ends: (await map.getSource('track-ends').getData()).features.map((f: { properties: { end: string }; geometry: { coordinates: number[] } }) => [f.properties.end, f.geometry.coordinates]),
        };
      });
    const waitForTrackNote = (pattern: RegExp) =>
      page.waitForFunction((source) => new RegExp(source).test((globalThis as any).document.querySelector('#track-status')?.textContent ?? ''), pattern.source, { timeout: 30_000 });

    beforeAll(async () => {
      times = path.map((_, i) => new Date(Date.now() - (50 - i * 9) * MINUTE).toISOString());
      // No location at creation (that would be a position of now): the uploaded positions place it.
      courier = await create({ name: 'Courier' });
      const uploaded = await service.inject({
        method: 'POST',
        url: `/twins/${courier}/positions`,
        headers: { ...tenant.headers(), 'content-type': JSON_API },
        payload: JSON.stringify({ data: path.map((coordinates, i) => ({ type: 'positions', attributes: { coordinates, occurred: times[i] } })) }),
      });
      expect(uploaded.json()).toEqual({ meta: { received: 6, new: 6 } });
      // Beside the track (in view wherever the map fits it). Public, so the tenant sees it; private
      // again after these tests (the others count the public twins they made).
      elsewhere = await service.tenant({ organization: 'Map page, next door' });
      neighbour = await service.createTwin(elsewhere, { name: 'Neighbour', public: true, location: { type: 'Point', coordinates: place(-21.59, 64.304) } });
    });

    afterAll(async () => {
      // The map where the popup test left it, for the filter test.
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 11 }), place(-21.75, 64.205));
      if (!neighbour) return;
      const hidden = await service.inject({
        method: 'PATCH',
        url: `/my/twins/${neighbour}/`,
        headers: { ...elsewhere.headers(), 'content-type': JSON_API },
        payload: document({ type: 'twins', id: neighbour, attributes: { public: false } }),
      });
      expect(hidden.statusCode).toBe(200);
    });

    it("shows the last hour of a twin of the tenant's organization as a line of its positions in order, its ends marked", async () => {
      // The filters applied again: a new TileJSON, whose bounds reach the new twins.
      await page.click('#filters button[type=submit]');
      await page.waitForFunction(() => /^Showing/.test((globalThis as any).document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 30_000 });
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 14 }), path[5]);
      expect(distinct(await rendered()).map((f) => f.name)).toEqual(expect.arrayContaining(['Courier', 'Neighbour']));
      await select('Courier');
      await popup().getByRole('button', { name: 'Track: last hour' }).click();
      await waitForTrackNote(/6 positions/);

      expect(await trackOnMap()).toEqual({
        layer: { type: 'line', source: 'track' },
        line: [{ type: 'LineString', coordinates: path }],
        ends: [
          ['start', path[0]],
          ['end', path[5]],
        ],
      });
      // The newest position's time, readable, and in the popup too.
      expect((await page.getAttribute('#track-status time', 'datetime'))!.slice(0, 19)).toBe(times[5].slice(0, 19));
      expect(await page.textContent('#track-status')).toMatch(/^Courier, last hour: 6 positions, the newest .+\.$/);
      expect(await popup().locator('.track-note').textContent()).toBe(await page.textContent('#track-status'));
      // One page, asked for as a line since an hour ago.
      const [asked, ...more] = trackRequests(courier);
      expect(more).toEqual([]);
      expect(asked.searchParams.get('format')).toBe('line');
      expect(Date.now() - Date.parse(asked.searchParams.get('since')!)).toBeGreaterThanOrEqual(60 * MINUTE);
      expect(Date.now() - Date.parse(asked.searchParams.get('since')!)).toBeLessThan(62 * MINUTE);
      // The twins stay on top of the track, to be clicked.
      const layers = await page.evaluate(() => (globalThis as any).twinMap.getStyle().layers.map((l: { id: string }) => l.id));
      expect(layers.indexOf('track-line')).toBeLessThan(layers.indexOf('points'));
    });

    it('offers no track for a twin of another organization, and asks for none', async () => {
      await select('Neighbour');
      await popup().locator('.track-controls.not-yours').waitFor({ timeout: 10_000 });
      expect(await popup().locator('.track-controls').textContent()).toBe('Its track is kept for its own organization only.');
      expect(await popup().getByRole('button', { name: /Track/ }).count()).toBe(0);
      expect(trackRequests(neighbour)).toEqual([]);
      // The courier's track stays until cleared.
      expect(await page.isVisible('#track')).toBe(true);
      await page.click('#track-clear');
      expect(await page.isVisible('#track')).toBe(false);
      expect(await trackOnMap()).toBeUndefined();
    });

    it('says so when the service cannot be reached, and asks again after a 503', async () => {
      const isTrack = (url: URL) => url.pathname === `/twins/${courier}/track`;
      await page.route(isTrack, (route) => route.abort());
      try {
        await select('Courier');
        await popup().getByRole('button', { name: 'Track: last day' }).click();
        await waitForTrackNote(/cannot be reached/);
        expect(await page.getAttribute('#track-status', 'class')).toBe('error');
        expect(await trackOnMap()).toBeUndefined();
      } finally {
        await page.unroute(isTrack);
      }
      // The map still works.
      expect(distinct(await rendered()).map((f) => f.name)).toContain('Courier');

      // Busy once (Retry-After: 1), then the service's own answer.
      let busy = 0;
      await page.route(isTrack, (route) =>
        busy++ === 0
          ? route.fulfill({ status: 503, headers: { 'content-type': JSON_API, 'retry-after': '1' }, body: JSON.stringify({ errors: [{ status: '503', code: 'unavailable', title: 'Busy', detail: 'Busy.' }] }) })
          : route.continue(),
      );
      try {
        await popup().getByRole('button', { name: 'Track: last day' }).click();
        await waitForTrackNote(/^Courier, last day: 6 positions/);
        expect(busy).toBe(2);
        expect((await trackOnMap())?.line).toEqual([{ type: 'LineString', coordinates: path }]);
        const since = Date.parse(trackRequests(courier).at(-1)!.searchParams.get('since')!);
        expect(Math.round((Date.now() - since) / 3_600_000)).toBe(24);
      } finally {
        await page.unroute(isTrack);
      }
    });

    it('follows the next links (re-rooted on the page origin) and stops at 50,000 positions, saying so', async () => {
      // Pages of 10,000 positions without end, their next links on the service's public host.
      const pages: URL[] = [];
      const isTrack = (url: URL) => url.pathname === `/twins/${courier}/track`;
      await page.route(isTrack, (route) => {
        const url = new URL(route.request().url());
        pages.push(url);
        const from = pages.length * 10_000;
        const coordinates = Array.from({ length: 10_000 }, (_, i) => [path[0][0] + (from + i) * 1e-7, path[0][1]]);
        const stamps = coordinates.map((_, i) => new Date(Date.parse(times[0]) + (from + i) * 100).toISOString());
        const next = new URL(`https://twins.example.com${url.pathname}${url.search}`);
        next.searchParams.set('page_after', `cursor-${pages.length}`);
        return route.fulfill({
          status: 200,
          headers: { 'content-type': 'application/geo+json' },
          body: JSON.stringify({
            type: 'FeatureCollection',
            features: [{ type: 'Feature', geometry: { type: 'LineString', coordinates }, properties: { times: stamps, positions: 10_000 } }],
            links: [{ rel: 'next', href: next.href, type: 'application/geo+json' }],
            numberReturned: 1,
          }),
        });
      });
      try {
        await popup().getByRole('button', { name: 'Track: last hour' }).click();
        await waitForTrackNote(/Capped/);
        expect(pages.map((url) => [url.origin, url.searchParams.get('page_after')])).toEqual([
          [origin, null],
          [origin, 'cursor-1'],
          [origin, 'cursor-2'],
          [origin, 'cursor-3'],
          [origin, 'cursor-4'],
        ]);
        expect(await page.textContent('#track-status')).toMatch(/^Courier, last hour: 50,000 positions, the newest .+\. Capped at 50,000 positions: later ones are not drawn\.$/);
        expect(
          await page.evaluate(async () => {
            const [line] = (await (globalThis as any).twinMap.getSource('track').getData()).features;
            return [line.geometry.type, line.geometry.coordinates.length];
          }),
        ).toEqual(['LineString', 50_000]);
      } finally {
        await page.unroute(isTrack);
        await page.click('#track-clear');
      }
    });
  });

  describe("the organization's geofences, and a twin's crossings", () => {
    const MINUTE = 60_000;
    /** Rounded to what the database gives back exactly. */
    const at = (lon: number, lat: number) => place(lon, lat).map((v) => Math.round(v * 1e6) / 1e6) as [number, number];
    /** The yard: a box (still one after `place`, which shifts whole tiles in Web Mercator). */
    const [sw, ne] = [at(-21.5, 64.25), at(-21.48, 64.26)];
    const yard = { type: 'Polygon', coordinates: [[sw, [ne[0], sw[1]], ne, [sw[0], ne[1]], sw]] };
    const outside = at(-21.51, 64.255);
    const inside = at(-21.49, 64.255);
    let yardId: string;
    let walker: string;
    let stranger: string;
    let elsewhere: TestTenant;
    const popup = () => page.locator('.maplibregl-popup-content');
    const select = async (name: string) => {
      await page.locator('#in-view button', { hasText: new RegExp(`^${name}$`) }).click();
      await popup().locator('strong', { hasText: name }).waitFor({ timeout: 10_000 });
    };
    const eventRequests = () => requests.filter((url) => url.startsWith(`${origin}/events/`));
    /** The geofences' source as the map holds it: each feature's id, name and geometry. */
    const geofencesOnMap = () =>
      page.evaluate(async () => {
        const map = (globalThis as any).twinMap;
        const layers = map.getStyle().layers.map((l: { id: string }) => l.id);
        return {
          layers: ['geofences-fill', 'geofences-line'].map((id) => [map.getLayer(id)?.type, map.getLayer(id)?.source]),
          under: layers.indexOf('geofences-line') < layers.indexOf('points') && layers.indexOf('geofences-line') >= 0,
          features: (await map.getSource('geofences').getData()).features.map((f: { properties: { id: string; name: string }; geometry: unknown }) => [f.properties.id, f.properties.name, f.geometry]),
        };
      });
    const signIn = async () => {
      await page.fill('#token', tenant.token);
      await page.fill('#organization', tenant.organizationId);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#filters:not([hidden])', { timeout: 30_000 });
      await page.waitForFunction(() => /geofences? outlined|no geofences|did not load/.test((globalThis as any).document.querySelector('#geofences-status')?.textContent ?? ''), undefined, { timeout: 30_000 });
    };

    beforeAll(async () => {
      const made = await service.inject({ method: 'POST', url: '/geofences/', headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: document({ type: 'geofences', attributes: { name: 'Yard <b>', geometry: yard } }) });
      expect(made.statusCode).toBe(201);
      yardId = made.json().data.id;
      // Outside, in, out and in again over the last few minutes: three crossings, the newest an entry.
      walker = await create({ name: 'Walker' });
      const times = [4, 3, 2, 1].map((m) => new Date(Date.now() - m * MINUTE).toISOString());
      const uploaded = await service.inject({
        method: 'POST',
        url: `/twins/${walker}/positions`,
        headers: { ...tenant.headers(), 'content-type': JSON_API },
        payload: JSON.stringify({ data: [outside, inside, outside, inside].map((coordinates, i) => ({ type: 'positions', attributes: { coordinates, occurred: times[i] } })) }),
      });
      expect(uploaded.json()).toEqual({ meta: { received: 4, new: 4 } });
      // A public twin of another organization in the yard too: no crossings of it are asked for.
      elsewhere = await service.tenant({ organization: 'Map page, across the road' });
      stranger = await service.createTwin(elsewhere, { name: 'Stranger', public: true, location: { type: 'Point', coordinates: at(-21.495, 64.257) } });
    });

    afterAll(async () => {
      // The map where the popup test left it, its tiles loaded again (the sign-in emptied the cache) before the filter test.
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 11 }), place(-21.75, 64.205));
      await settled();
      if (!stranger) return;
      const hidden = await service.inject({
        method: 'PATCH',
        url: `/my/twins/${stranger}/`,
        headers: { ...elsewhere.headers(), 'content-type': JSON_API },
        payload: document({ type: 'twins', id: stranger, attributes: { public: false } }),
      });
      expect(hidden.statusCode).toBe(200);
    });

    it('forgets the geofences at sign-out, and outlines them under the twins after sign-in', async () => {
      await page.click('#sign-out');
      expect((await geofencesOnMap()).features).toEqual([]);
      expect(await page.isVisible('#geofences')).toBe(false);
      await signIn();
      const listed = (await service.inject({ method: 'GET', url: '/geofences/?page_size=100', headers: tenant.headers() })).json().data;
      expect(listed.map((g: { id: string }) => g.id)).toEqual([yardId]);
      expect(listed[0].attributes.geometry).toEqual(yard);
      expect(await geofencesOnMap()).toEqual({
        layers: [
          ['fill', 'geofences'],
          ['line', 'geofences'],
        ],
        under: true,
        features: [[yardId, 'Yard <b>', yard]],
      });
      expect(await page.textContent('#geofences-status')).toBe('1 geofence outlined (click one for its name).');
      const asked = requests.filter((url) => url.startsWith(`${origin}/geofences/`)).at(-1)!;
      expect(new URL(asked).searchParams.get('page_size')).toBe('100');

      // A click inside the yard, away from the twins, names it (as text).
      await page.evaluate(([center]) => (globalThis as any).twinMap.jumpTo({ center, zoom: 14 }), [inside]);
      await settled();
      const click = await page.evaluate((point) => {
        const map = (globalThis as any).twinMap;
        const xy = map.project(point);
        const box = map.getContainer().getBoundingClientRect();
        return { x: box.left + xy.x, y: box.top + xy.y };
      }, at(-21.485, 64.2535));
      await page.mouse.click(click.x, click.y);
      await popup().locator('.geofence-popup').waitFor({ timeout: 10_000 });
      expect(await popup().locator('.geofence-popup li').allTextContents()).toEqual(['Yard <b>']);
      expect(await popup().locator('.geofence-popup b').count()).toBe(0);
    });

    it("lists a twin's latest crossings in its popup, newest first, naming the geofence", async () => {
      expect(distinct(await rendered()).map((f) => f.name)).toEqual(expect.arrayContaining(['Walker', 'Stranger']));
      const before = eventRequests().length;
      const timeline = page.waitForRequest((request) => request.url().startsWith(`${origin}/events/`), { timeout: 10_000 });
      await select('Walker');
      // Asked for as the twin's own timeline.
      expect((await timeline).headers()['x-twin']).toBe(walker);
      await popup().locator('.crossings li').first().waitFor({ timeout: 10_000 });
      const crossings = await popup().locator('.crossings li').allTextContents();
      expect(crossings).toHaveLength(3);
      expect(crossings[0]).toMatch(/^entered Yard <b> at .+$/);
      expect(crossings[1]).toMatch(/^left Yard <b> at .+$/);
      expect(crossings[2]).toMatch(/^entered Yard <b> at .+$/);
      expect(await popup().locator('.crossings b').count()).toBe(0);
      // Newest first, each at its position's time.
      const times = await popup().locator('.crossings li time').evaluateAll((elements) => elements.map((e) => Date.parse((e as any).dateTime.replace(/(\.\d{3})\d+/, '$1'))));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(Date.now() - times[0]).toBeGreaterThanOrEqual(MINUTE - 1000);
      expect(Date.now() - times[0]).toBeLessThan(3 * MINUTE);
      // One request: the timeline filtered to the geofence category.
      const [asked, ...more] = eventRequests().slice(before).map((url) => new URL(url));
      expect(more).toEqual([]);
      expect([asked.pathname, asked.searchParams.get('category'), asked.searchParams.get('page_size')]).toEqual(['/events/', 'geofence', '5']);
    });

    it('follows links.next (re-rooted on the page origin) and stops at 2,000 geofences, saying so', async () => {
      // Pages of 100 small boxes without end, their next links on the service's public host.
      const pages: URL[] = [];
      const isList = (url: URL) => url.pathname === '/geofences/';
      await page.route(isList, (route) => {
        const url = new URL(route.request().url());
        pages.push(url);
        const data = Array.from({ length: 100 }, (_, i) => {
          const n = pages.length * 100 + i;
          return { type: 'geofences', id: `fake-${n}`, attributes: { name: `Box ${n}`, geometry: { type: 'Polygon', coordinates: [[[n / 100, 0], [n / 100 + 0.005, 0], [n / 100 + 0.005, 0.005], [n / 100, 0]]] } } };
        });
        const next = new URL(`https://twins.example.com/geofences/?page_size=100&page_number=${pages.length + 1}`);
        return route.fulfill({ status: 200, headers: { 'content-type': JSON_API }, body: JSON.stringify({ links: { next: next.href }, data, meta: {} }) });
      });
      try {
        await page.click('#sign-out');
        await signIn();
        expect(await page.textContent('#geofences-status')).toBe('2,000 geofences outlined (click one for its name). Capped at 2,000: the rest are not drawn.');
        expect(pages.map((url) => [url.origin, url.searchParams.get('page_number')])).toEqual(Array.from({ length: 20 }, (_, i) => [origin, i === 0 ? null : String(i + 1)]));
        expect(await page.evaluate(async () => (await (globalThis as any).twinMap.getSource('geofences').getData()).features.length)).toBe(2000);
      } finally {
        await page.unroute(isList);
      }
      // The real ones again.
      await page.click('#sign-out');
      await signIn();
      expect((await geofencesOnMap()).features.map(([id]: [string]) => id)).toEqual([yardId]);
    });

    it('shows no crossings for a twin of another organization, and asks for none', async () => {
      // Signing in again fitted the map to every twin: back to the yard, where Stranger is a point of its own.
      await page.evaluate(([center]) => (globalThis as any).twinMap.jumpTo({ center, zoom: 14 }), [inside]);
      await settled();
      const before = eventRequests().length;
      await select('Stranger');
      await popup().locator('.track-controls.not-yours').waitFor({ timeout: 10_000 });
      expect(await popup().locator('.crossings').isVisible()).toBe(false);
      expect(await popup().locator('.crossings li').count()).toBe(0);
      expect(eventRequests().slice(before)).toEqual([]);
    });
  });

  describe("markup and script in another organization's twins", () => {
    /** Each payload calls this when it runs: a binding the test installs in the page, recording into `ran`. */
    const run = (label: string) => `hostileScriptRan('${label}')`;
    /**
     * Public twins of another organization (so they reach this tenant's map) whose texts are markup and
     * script of every kind: an image's error handler, script elements (plain and in SVG), an SVG's load
     * handler, javascript: links and URLs, a frame with a script, an attribute broken out of.
     */
    const HOSTILE = [
      {
        name: `<img src=x onerror="${run('name img')}">`,
        description: `<script>${run('description script')}</script>`,
        tags: [`<svg onload="${run('tag svg')}"></svg>`],
        personality: { characteristics: [`<svg/onload=${run('characteristic')}>`] },
      },
      {
        name: `<svg><script>${run('name svg script')}</script></svg><a href="javascript:${run('name link')}">click</a>`,
        description: `<a href="javascript:${run('description link')}">more</a>`,
        website: `javascript:${run('website')}`,
        tags: [`<iframe srcdoc="<script>parent.${run('iframe')}</script>"></iframe>`],
        personality: { characteristics: ['harmless'] },
      },
      {
        name: `"><svg onload=${run('name svg')}>`,
        description: `<img src=x onerror=${run('description img')}>`,
        tags: [`javascript:${run('tag url')}`, `</pre><script>${run('pre')}</script>`],
        personality: { characteristics: ['harmless'] },
      },
    ];
    const ran: string[] = [];
    let hostile: TestTenant;
    const ids: string[] = [];
    const at = (i: number) => place(-21.3 + i * 0.002, 64.5 + (i % 2) * 0.001);
    const popup = () => page.locator('.maplibregl-popup-content');
    /** The elements of `selector` that are not text: what markup would have made. */
    const madeElements = (selector: string) =>
      page.locator(selector).evaluateAll((roots) => roots.flatMap((root) => [...(root as any).querySelectorAll('img, svg, script, iframe, a[href^="javascript"], [onerror], [onload]')].map((e) => e.outerHTML)));

    beforeAll(async () => {
      await page.exposeBinding('hostileScriptRan', (_source, label: string) => ran.push(label));
      hostile = await service.tenant({ organization: 'Map page, <b>hostile</b>' });
      for (const [i, attributes] of HOSTILE.entries()) {
        ids.push(await service.createTwin(hostile, { ...attributes, public: true, location: { type: 'Point', coordinates: at(i) } }));
      }
    });

    afterAll(async () => {
      // Private again: the filter test counts the public twins it sees; the map back where it expects it.
      for (const id of ids) {
        const hidden = await service.inject({ method: 'PATCH', url: `/my/twins/${id}/`, headers: { ...hostile.headers(), 'content-type': JSON_API }, payload: document({ type: 'twins', id, attributes: { public: false } }) });
        expect(hidden.statusCode).toBe(200);
      }
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 11 }), place(-21.75, 64.205));
      await settled();
    });

    it('shows them on the map, in the "In view" list and in the popup as the very text written, and runs none of it', async () => {
      // The filters applied again: a TileJSON whose bounds reach the new twins.
      await page.click('#filters button[type=submit]');
      await page.waitForFunction(() => /^Showing/.test((globalThis as any).document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 30_000 });
      await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 15 }), at(1));
      const names = HOSTILE.map((twin) => twin.name);
      expect(distinct(await rendered()).map((f) => f.name)).toEqual(expect.arrayContaining(names));
      const listed = await page.locator('#in-view button').allTextContents();
      expect(listed).toEqual(expect.arrayContaining(names));

      for (const [i, twin] of HOSTILE.entries()) {
        // The list's button whose text is exactly the name.
        const index = listed.indexOf(twin.name);
        await page.locator('#in-view button').nth(index).click();
        await popup().locator('strong').filter({ hasText: twin.name.slice(0, 12) }).waitFor({ timeout: 10_000 });
        expect(await popup().locator('strong').textContent()).toBe(twin.name);
        // Its document, fetched and shown as text: every attribute as written.
        await popup().locator('a').click();
        await popup().locator('pre:not([hidden])').waitFor({ timeout: 10_000 });
        const shown = JSON.parse((await popup().locator('pre').textContent())!);
        expect({ name: shown.name, description: shown.description, website: shown.website, tags: shown.tags }).toEqual({
          name: twin.name,
          description: twin.description,
          website: twin.website ?? '',
          tags: twin.tags,
        });
        expect(await popup().locator('a').getAttribute('href')).toBe(`/twins/${ids[i]}/`);
        expect(await madeElements('.maplibregl-popup-content')).toEqual([]);
      }
      // A characteristic shows where the page shows one: typed into the filter, named back in the status
      // line, and its twin alone on the map.
      const characteristic = HOSTILE[0].personality.characteristics[0];
      const showing = (text: string) => page.waitForFunction((expected) => (globalThis as any).document.querySelector('#status')?.textContent === expected, text, { timeout: 30_000 });
      await page.fill('input[name=characteristics]', characteristic);
      await page.click('#filters button[type=submit]');
      await showing(`Showing the twins you can see, filtered by characteristics=${characteristic}.`);
      expect(distinct(await rendered()).map((f) => f.name)).toEqual([HOSTILE[0].name]);
      expect(await page.locator('#in-view button').allTextContents()).toEqual([HOSTILE[0].name]);
      await page.fill('input[name=characteristics]', '');
      await page.click('#filters button[type=submit]');
      await showing('Showing every twin you can see.');

      expect(await madeElements('#in-view, #status, #map')).toEqual([]);
      await page.waitForTimeout(500);
      expect(ran).toEqual([]);
      expect(violations).toEqual([]);
    });

    it('and were such text ever parsed as markup (an innerHTML, a dependency), the policy would run none of it nor let it reach another origin', async () => {
      // A page of its own, so that the violations provoked here stay out of the session's record.
      const probe = await browser.newPage();
      const provoked = await recordPolicyViolations(probe);
      /** Violations arrive as events, after what provoked them: those matching `pattern`, once `count` have (or 5 s passed). */
      const reported = async (pattern: RegExp, count = 1) => {
        const matching = () => provoked.filter((violation) => pattern.test(violation));
        for (let waited = 0; waited < 5000 && matching().length < count; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
        return matching();
      };
      await probe.exposeBinding('hostileScriptRan', (_source, label: string) => ran.push(label));
      try {
        await probe.goto(`${origin}/map`);
        await probe.waitForFunction(() => (globalThis as any).twinMap?.loaded(), undefined, { timeout: 30_000 });
        // Every text of the twins parsed as HTML into the page (a fragment from a range runs its scripts,
        // unlike innerHTML), then every link in them followed.
        const texts = HOSTILE.flatMap((twin) => [twin.name, twin.description, ...twin.tags, ...twin.personality.characteristics]);
        await probe.evaluate((html) => {
          const doc = (globalThis as any).document;
          const list = doc.querySelector('#in-view');
          for (const text of html) list.append(doc.createRange().createContextualFragment(text));
          for (const link of list.querySelectorAll('a')) link.click();
        }, texts);
        // The markup was made (2 images, 4 SVGs, 3 scripts, a frame), and none of its scripts ran: the
        // policy refused the 2 HTML scripts, the frame's and the 2 javascript: links (script-src-elem; a
        // fragment never starts the script inside an SVG), the 2 images' error and the 3 SVGs' load
        // handlers (script-src-attr).
        expect(await probe.locator('#in-view :is(img, svg, script, iframe)').count()).toBe(10);
        expect(await reported(/^script-src-elem /, 5)).toHaveLength(5);
        expect(await reported(/^script-src-attr /, 5)).toHaveLength(5);
        expect(ran).toEqual([]);

        // Nor may script evaluate text, from a timer (what a test evaluates itself, Chromium runs whatever the policy).
        const evaluated = await probe.evaluate(
          () =>
            new Promise((resolve) =>
              setTimeout(() => {
                try {
                  resolve(String((globalThis as any).eval("hostileScriptRan('eval')")));
                } catch (error) {
                  resolve((error as Error).name);
                }
              }),
            ),
        );
        expect(evaluated).toBe('EvalError');
        expect(await reported(/^script-src blocked eval /)).toHaveLength(1);

        // Nor reach another origin, from the page nor from MapLibre's worker (its file carries the same
        // policy): the service itself under another name, which would otherwise answer (an opaque answer).
        const elsewhere = origin.replace('127.0.0.1', 'localhost');
        const reach = (url: string) => fetch(url, { mode: 'no-cors' }).then(() => 'reached', () => 'refused');
        expect(await probe.evaluate(reach, `${elsewhere}/health?from=page`)).toBe('refused');
        expect(await probe.workers()[0].evaluate(reach, `${elsewhere}/health?from=worker`)).toBe('refused');
        expect(await reported(/^connect-src blocked http:\/\/localhost:\d+\/health\?from=page /)).toHaveLength(1);
        expect(await reported(/^connect-src blocked http:\/\/localhost:\d+\/health\?from=worker .*\(in .*\/map\/assets\/maplibre-gl-worker\.mjs/)).toHaveLength(1);
        expect(ran).toEqual([]);
      } finally {
        await probe.close();
      }
    });
  });

  it('applies a filter: only public twins remain, from tiles asked for with it', async () => {
    const before = requests.length;
    await page.selectOption('select[name=is_public]', 'true');
    await page.waitForFunction(() => /filtered by is_public=true/.test((globalThis as any).document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 30_000 });
    const names = distinct(await rendered())
      .filter((f) => !f.cluster)
      .map((f) => f.name);
    expect(names).toContain('Harbour');
    expect(names).not.toContain('Lighthouse');
    expect(names).not.toContain('Tea house');
    const tiles = requests.slice(before).filter((url) => url.startsWith(`${origin}/twins/tiles/`));
    expect(tiles.length).toBeGreaterThan(0);
    expect(tiles.every((url) => new URL(url).searchParams.get('is_public') === 'true')).toBe(true);
    // The square's public half, counted in its clusters.
    await page.evaluate((center) => (globalThis as any).twinMap.jumpTo({ center, zoom: 10 }), place(-21.89, 64.145));
    const square = distinct(await rendered()).reduce((sum, f) => sum + (f.cluster ? Number(f.count) : f.name?.startsWith('Square') ? 1 : 0), 0);
    expect(square).toBe(30);
  });

  it('is usable at a phone-sized viewport: the filters fold away, and open stacked from the keyboard', async () => {
    await page.setViewportSize({ width: 375, height: 667 });
    await settled();
    expect(await page.isVisible('select[name=is_public]')).toBe(false);
    const map = (await page.locator('#map').boundingBox())!;
    expect(map.width).toBeGreaterThan(300);
    expect(map.height).toBeGreaterThan(330);
    expect(map.y + map.height).toBeLessThanOrEqual(667);
    await page.focus('#filter-panel summary');
    await page.keyboard.press('Enter');
    const publicSelect = (await page.locator('select[name=is_public]').boundingBox())!;
    const supplierSelect = (await page.locator('select[name=is_supplier]').boundingBox())!;
    expect(supplierSelect.y).toBeGreaterThan(publicSelect.y);
    expect(publicSelect.x + publicSelect.width).toBeLessThanOrEqual(375);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('name'))).toBe('is_public');
  });

  it('signs out, forgetting the credentials', async () => {
    await page.click('#sign-out');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('twin-map-token'))).toBeNull();
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('twin-map-organization'))).toBeNull();
    expect(await page.isVisible('#sign-in')).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).twinMap.getSource('twins'))).toBeUndefined();
  });

  it('fits twins that reach towards both poles: the whole height of the world, edge to edge', async () => {
    // Public twins of another organization near both poles and the antimeridian, seen by this tenant
    // too; private again after, so the other tests see the public twins they saw before.
    const far = await service.tenant({ organization: 'Map page, far away' });
    const ids = [await service.createTwin(far, { name: 'Far north', public: true, location: { type: 'Point', coordinates: [179.9, 85.05] } })];
    ids.push(await service.createTwin(far, { name: 'Far south', public: true, location: { type: 'Point', coordinates: [-179.9, -85.05] } }));
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.fill('#token', tenant.token);
      await page.fill('#organization', tenant.organizationId);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#filters:not([hidden])', { timeout: 30_000 });
      const tileJson = (await service.inject({ method: 'GET', url: '/twins/tiles.json', headers: tenant.headers() })).json();
      expect(tileJson.bounds[1]).toBeLessThan(-85);
      expect(tileJson.bounds[3]).toBeGreaterThan(85);
      expect(await page.evaluate(([w, s, e, n]) => {
        const view = (globalThis as any).twinMap.getBounds();
        return view.contains([w, s]) && view.contains([e, n]) ? 'on screen' : view.toArray();
      }, tileJson.bounds as number[])).toBe('on screen');
      await page.click('#sign-out');
    } finally {
      // Twins are not deleted through the API: made private, they are no one else's.
      for (const id of ids) {
        const hidden = await service.inject({ method: 'PATCH', url: `/my/twins/${id}/`, headers: { ...far.headers(), 'content-type': JSON_API }, payload: document({ type: 'twins', id, attributes: { public: false } }) });
        expect(hidden.statusCode).toBe(200);
      }
    }
  });

  it("comes back from the browser's cache: a reload asks the service for the page alone, and gets a 304", async () => {
    // What reaches the service, seen from its socket (the browser reports a revalidated page as its 200).
    const served: string[] = [];
    const server = service.app.getHttpServer() as Server;
    const observe = (request: IncomingMessage, response: ServerResponse) => response.on('finish', () => served.push(`${response.statusCode} ${request.url}`));
    server.on('request', observe);
    try {
      await page.reload();
      await page.waitForFunction(() => (globalThis as any).twinMap?.loaded(), undefined, { timeout: 30_000 });
      // The files the page names carry their version (?v=) and are kept for good; the page is revalidated.
      expect(served).toEqual(['304 /map']);
    } finally {
      server.off('request', observe);
    }
  });

  it('made no request outside the service, met no error but the one it provoked, no script or console error, and no Content-Security-Policy violation', () => {
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
    expect(requests.some((url) => url.startsWith(`${origin}/twins/tiles/`))).toBe(true);
    // A 503 (a database too busy to lend a connection within a second, on a loaded machine) is the
    // service's "ask again", and the page does: each is followed by an answer.
    const failed = answers.filter((a) => a.status >= 400);
    expect(failed.filter((a) => a.status !== 503)).toEqual([{ url: `${origin}/twins/tiles.json`, status: 401 }]);
    for (const busy of failed.filter((a) => a.status === 503)) {
      expect({ url: busy.url, answered: answers.slice(answers.indexOf(busy)).some((a) => a.url === busy.url && a.status < 400) }).toEqual({ url: busy.url, answered: true });
    }
    expect(pageErrors).toEqual([]);
    expect(violations).toEqual([]);
  });
});
