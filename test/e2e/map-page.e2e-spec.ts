import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { document as jsonApiDocument, JSON_API, TestApp, TestTenant } from '../support/test-app';

/** Debian's Chromium (apt-get install chromium): the browser of this test, with the flags it needs headless in a container. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebGL without a GPU: SwiftShader, software rendering.
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
];

// Functions evaluated in the page reach the map as `globalThis.twinMap` (the test compiles without the DOM's types).
interface Rendered {
  cluster?: boolean;
  count?: number;
  name?: string;
  id?: string;
}

/**
 * The map page in a real headless Chromium against the real service on a port: sign in, tiles load,
 * clusters and points render (read back from the map), a popup opens, a filter changes what is shown,
 * and no request leaves the service's origin. MAP_SCREENSHOT=1 also writes docs/map.png.
 */
describe('the map page in a browser', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const requests: string[] = [];

  const create = async (attributes: Record<string, unknown>) => {
    const response = await service.inject({
      method: 'POST',
      url: '/my/twins/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: jsonApiDocument({ type: 'twins', attributes }),
    });
    if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
  };

  /** What the map renders now, once it is at rest. */
  const rendered = async (): Promise<Rendered[]> => {
    await page.waitForFunction(() => (globalThis as any).twinMap.areTilesLoaded(), undefined, { timeout: 30_000 });
    await page.waitForTimeout(300);
    return page.evaluate(() => {
      const map = (globalThis as any).twinMap;
      if (!map.getLayer('points')) return [];
      return map.queryRenderedFeatures({ layers: ['clusters', 'points'] }).map((f: { properties: Rendered }) => f.properties) as Rendered[];
    });
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
    // Few features per tile, so a city of twins is clusters at first and points when zoomed in.
    service = await TestApp.start({ TILE_MAX_FEATURES: '20' });
    await service.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await service.tenant({ organization: 'Map page' });
    // Near Reykjavik, where no other test puts twins: a dense square of 60 and three apart.
    const values = Array.from({ length: 60 }, (_, i) => [-21.9 + (i % 10) * 0.002, 64.14 + Math.floor(i / 10) * 0.002]);
    for (const [i, [lon, lat]] of values.entries()) await create({ name: `Square ${i}`, public: i % 2 === 0, location: { type: 'Point', coordinates: [lon, lat] } });
    await create({ name: 'Harbour', public: true, location: { type: 'Point', coordinates: [-21.8, 64.2] } });
    await create({ name: 'Lighthouse', location: { type: 'Point', coordinates: [-21.75, 64.21] } });
    await create({ name: 'Tea house', location: { type: 'Point', coordinates: [-21.7, 64.19] }, personality: { services: ['tea'] } });

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => requests.push(`pageerror: ${error.message}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('signs in with the token and organization kept in session storage, never in the URL, and shows the tiles', async () => {
    await page.goto(`${origin}/map`);
    await page.fill('#token', tenant.token);
    await page.fill('#organization', tenant.organizationId);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#filters:not([hidden])', { timeout: 30_000 });
    expect(page.url()).toBe(`${origin}/map`);
    expect(await page.evaluate(() => [(globalThis as any).sessionStorage.getItem('twin-map-token'), (globalThis as any).sessionStorage.getItem('twin-map-organization')])).toEqual([tenant.token, tenant.organizationId]);
    expect(requests.some((url) => url.includes(tenant.token))).toBe(false);
    // Fitted to the twins: all 63 are on screen, the square as clusters (counts adding up), the others as points.
    const features = await rendered();
    const total = features.reduce((sum, f) => sum + (f.cluster ? Number(f.count) : 1), 0);
    expect(features.some((f) => f.cluster)).toBe(true);
    expect(total).toBeGreaterThanOrEqual(63);
    // The keyboard list names what is in view.
    expect(await page.locator('#in-view button').count()).toBeGreaterThan(0);
    if (process.env.MAP_SCREENSHOT === '1') {
      // The README's picture: the square as one cluster, the three others as points.
      await page.evaluate(() => (globalThis as any).twinMap.jumpTo({ center: [-21.8, 64.175], zoom: 8 }));
      await rendered();
      await page.screenshot({ path: join(__dirname, '..', '..', 'docs', 'map.png') });
    }
  });

  it('shows points when zoomed in, and opens a popup with the name and a link to the twin', async () => {
    await page.evaluate(() => (globalThis as any).twinMap.jumpTo({ center: [-21.75, 64.205], zoom: 11 }));
    const features = await rendered();
    const lighthouse = features.find((f) => f.name === 'Lighthouse');
    expect(lighthouse).toBeDefined();
    const position = await page.evaluate(() => {
      const map = (globalThis as any).twinMap;
      const point = map.project([-21.75, 64.21]);
      const box = map.getContainer().getBoundingClientRect();
      return { x: box.left + point.x, y: box.top + point.y };
    });
    await page.mouse.click(position.x, position.y);
    const popup = page.locator('.maplibregl-popup-content');
    await popup.waitFor({ timeout: 10_000 });
    expect(await popup.locator('strong').textContent()).toBe('Lighthouse');
    expect(await popup.locator('a').getAttribute('href')).toBe(`/twins/${lighthouse!.id}/`);
    // The link shows the twin fetched with the credentials.
    await popup.locator('a').click();
    await popup.locator('pre:not([hidden])').waitFor({ timeout: 10_000 });
    expect(await popup.locator('pre').textContent()).toContain('"name": "Lighthouse"');
  });

  it('applies a filter: only public twins remain', async () => {
    await page.selectOption('select[name=is_public]', 'true');
    await page.waitForFunction(() => /filtered by is_public=true/.test((globalThis as any).document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 30_000 });
    const features = await rendered();
    const names = features.filter((f) => !f.cluster).map((f) => f.name);
    expect(names).toContain('Harbour');
    expect(names).not.toContain('Lighthouse');
    expect(names).not.toContain('Tea house');
  });

  it('is usable at a phone-sized viewport', async () => {
    await page.setViewportSize({ width: 375, height: 667 });
    await page.waitForTimeout(300);
    const box = await page.locator('#map').boundingBox();
    expect(box!.width).toBeGreaterThan(300);
    expect(box!.height).toBeGreaterThan(250);
    await page.focus('select[name=is_public]');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('name'))).toBe('is_public');
  });

  it('signs out, forgetting the credentials', async () => {
    await page.click('#sign-out');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('twin-map-token'))).toBeNull();
    expect(await page.isVisible('#sign-in')).toBe(true);
  });

  it('made no request outside the service, and no script error', () => {
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
    expect(requests.some((url) => url.startsWith(`${origin}/twins/tiles/`))).toBe(true);
  });
});
