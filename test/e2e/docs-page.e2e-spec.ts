import type { AddressInfo } from 'node:net';
import type { Browser, Locator, Page } from 'playwright-core';
import { API_POLICY, DOCS_POLICY } from '../../src/common/http/content-security-policy';
import { launchChromium, recordPolicyViolations } from '../support/browser';
import { png } from '../support/images';
import { TestApp, TestTenant } from '../support/test-app';

/**
 * Swagger UI (`/docs`) in a real headless Chromium against the service on a port, under its
 * Content-Security-Policy: the page and its files carry the policy and hold nothing inline; the UI
 * loads the document, Authorize takes the token and the organization, "Try it out" calls the API with
 * them (a JSON answer, and an image answer shown from a blob: URL), the authorization survives a
 * reload; and the whole session reports no policy violation, no console error and no request outside
 * the service.
 */
describe('Swagger UI in a browser, under its Content-Security-Policy', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let imageId: string;
  let violations: string[];
  const requests: string[] = [];
  const pageErrors: string[] = [];

  const operation = (id: string) => page.locator(`#operations-${id}`);
  /** Opens an operation, "Try it out", fills its parameters, Execute: the live answer's status and body. */
  const tryItOut = async (block: Locator, parameters: Record<string, string> = {}) => {
    if (!(await block.locator('.opblock-body').isVisible())) await block.locator('.opblock-summary').click();
    const tryOut = block.locator('button.try-out__btn');
    if ((await tryOut.textContent())?.trim() === 'Try it out') await tryOut.click();
    for (const [name, value] of Object.entries(parameters)) await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
    await block.locator('button.execute').click();
    const live = block.locator('.live-responses-table .response');
    await live.waitFor({ timeout: 30_000 });
    return { status: (await live.locator('.response-col_status').textContent())?.trim(), body: live.locator('.response-col_description') };
  };

  beforeAll(async () => {
    service = await TestApp.start();
    await service.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await service.tenant({ organization: 'Docs page' });
    const uploaded = await service.inject({ method: 'POST', url: '/images/', headers: { ...tenant.headers(), 'content-type': 'image/png' }, payload: png(3, 2) });
    expect(uploaded.statusCode).toBe(201);
    imageId = uploaded.json().data.id;

    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    violations = await recordPolicyViolations(page);
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // Swagger UI's own notice when the page opens on a deep link (the URL's #/tag/operation, kept across
    // the reload) naming an operation id with a `_`, as every id Nest makes has, is not an error of the page.
    page.on('console', (message) => message.type() === 'error' && !message.text().startsWith('Deprecated: escaping deep link whitespace with `_`') && pageErrors.push(message.text()));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('serves the page, its initializer and its files under the policy, with nothing inline; the documents under the API policy', async () => {
    expect(DOCS_POLICY).toBe(
      "default-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data: blob:; style-src 'self'",
    );
    const files = ['/docs', '/docs/', '/docs/swagger-ui-init.js', ...['swagger-ui-bundle.js', 'swagger-ui.css', 'index.css', 'favicon-32x32.png', 'favicon-16x16.png'].map((name) => `/docs/${name}`)];
    const answers = await Promise.all(files.map((url) => service.inject({ method: 'GET', url })));
    expect(answers.map((answer, i) => [files[i], answer.statusCode, answer.headers['content-security-policy']])).toEqual(files.map((url) => [url, 200, DOCS_POLICY]));
    // Only the files the page loads: the rest of swagger-ui-dist (its demo page and initializer among them) is not served.
    for (const url of ['/docs/index.html', '/docs/swagger-initializer.js', '/docs/oauth2-redirect.html', '/docs/swagger-ui-standalone-preset.js', '/docs/package.json']) {
      expect([url, (await service.inject({ method: 'GET', url })).statusCode]).toEqual([url, 404]);
    }
    const html = answers[0].body;
    expect(html).not.toMatch(/<style|\sstyle=|\son\w+=|javascript:/i);
    expect([...html.matchAll(/<script\b[^>]*>([^<]*)<\/script>/g)].map(([tag, text]) => [/\ssrc="\/docs\/[\w.-]+\.js"/.test(tag), text])).toEqual([
      [true, ''],
      [true, ''],
    ]);
    for (const url of ['/docs-json', '/docs-yaml']) expect((await service.inject({ method: 'GET', url })).headers['content-security-policy']).toBe(API_POLICY);
  });

  it('loads the document and shows every operation', async () => {
    await page.goto(`${origin}/docs`);
    await operation('organizations-OrganizationsController_list').waitFor({ timeout: 30_000 });
    expect(await page.locator('.information-container .title').textContent()).toMatch(/^Digital Twin, Quest and Timeline Event service/);
    expect(await page.locator('.opblock').count()).toBeGreaterThan(50);
  });

  it('authorizes with the token and the organization, and "Try it out" calls the API with them', async () => {
    await page.click('.scheme-container button.authorize');
    const scheme = (name: string) => page.locator('.modal-ux .auth-container').filter({ has: page.locator('h4', { hasText: new RegExp(`^${name}\\b`) }) });
    await scheme('Token').locator('input').fill(`Token ${tenant.token}`);
    await scheme('Token').locator('button.authorize').click();
    await scheme('Organization').locator('input').fill(tenant.organizationId);
    await scheme('Organization').locator('button.authorize').click();
    await page.click('.modal-ux button.btn-done');

    // The list of the caller's organizations takes the token alone.
    const list = operation('organizations-OrganizationsController_list');
    const asked = page.waitForRequest((request) => request.url().startsWith(`${origin}/organizations`));
    const { status, body } = await tryItOut(list);
    expect(status).toBe('200');
    expect((await asked).headers().authorization).toBe(`Token ${tenant.token}`);
    const shown = JSON.parse((await body.locator('pre').first().textContent())!);
    expect(shown.data.map((organization: { id: string }) => organization.id)).toEqual([tenant.organizationId]);
  });

  it('shows an image answer (from a blob: URL the page makes of the bytes)', async () => {
    // A tenant route: the token and the organization.
    const asked = page.waitForRequest((request) => request.url().startsWith(`${origin}/images/`));
    const { status, body } = await tryItOut(operation('images-ImagesController_content'), { imageId });
    expect(status).toBe('200');
    expect((await asked).headers()).toEqual(expect.objectContaining({ authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId }));
    const image = body.locator('img');
    await page.waitForFunction((element) => (element as any).complete && (element as any).naturalWidth > 0, await image.elementHandle(), { timeout: 10_000 });
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    expect(await image.evaluate((element) => [(element as any).naturalWidth, (element as any).naturalHeight])).toEqual([3, 2]);
  });

  it('keeps the authorization across a reload of the page', async () => {
    await page.reload();
    const content = operation('images-ImagesController_content');
    await content.waitFor({ timeout: 30_000 });
    const asked = page.waitForRequest((request) => request.url().startsWith(`${origin}/images/`));
    expect((await tryItOut(content, { imageId })).status).toBe('200');
    expect((await asked).headers()).toEqual(expect.objectContaining({ authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId }));
  });

  it('made no request outside the service, and met no policy violation, script or console error', () => {
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(violations).toEqual([]);
  });
});
