import { describeAccess, listRoutes } from '../support/routes';
import { TestApp } from '../support/test-app';

/**
 * Every route with the guards it passes through. Reviewing a change to this snapshot is reviewing a
 * permission change; update it deliberately with `npx jest -u test/e2e/routes`.
 */
describe('route permissions', () => {
  let service: TestApp;
  beforeAll(async () => {
    service = await TestApp.start();
  });
  afterAll(() => service.close());

  it('every route and its access rule', () => {
    const routes = listRoutes(service.app);
    expect(routes.length).toBeGreaterThan(5);
    expect(routes.map(describeAccess).join('\n')).toMatchSnapshot();
  });

  it('only health and the map page (which holds no data) are public, and only /admin/ uses the admin token', () => {
    const routes = listRoutes(service.app);
    expect(routes.filter((r) => r.access.public).map((r) => r.path).sort()).toEqual(['/health', '/health/live', '/health/ready', '/map', '/map/assets/:asset']);
    for (const route of routes) expect(!!route.access.admin).toBe(route.path.startsWith('/admin/'));
  });
});
