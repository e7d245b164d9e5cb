import { API_POLICY, contentSecurityPolicy, DOCS_POLICY, MAP_PAGE_POLICY } from '../../src/common/http/content-security-policy';

describe('the Content-Security-Policy of an answer, by its route', () => {
  it.each([
    ['/map', MAP_PAGE_POLICY],
    ['/map/assets/:asset', MAP_PAGE_POLICY],
    ['/docs', DOCS_POLICY],
    ['/docs/swagger-ui-init.js', DOCS_POLICY],
    ['/docs/:file', DOCS_POLICY],
    // The documents are JSON and YAML, not pages.
    ['/docs-json', API_POLICY],
    ['/docs-yaml', API_POLICY],
    ['/maps', API_POLICY],
    ['/twins/tiles/:z/:x/:y.mvt', API_POLICY],
    ['/', API_POLICY],
    // No route matched (a 404 before any handler).
    [undefined, API_POLICY],
  ])('%s', (route, policy) => {
    expect(contentSecurityPolicy(route)).toBe(policy);
  });

  it("allows nothing unsafe and no other origin, and keeps every page from being framed, rebased or posting forms", () => {
    for (const policy of [MAP_PAGE_POLICY, DOCS_POLICY, API_POLICY]) {
      expect(policy).not.toMatch(/unsafe-|\*|https?:/);
      expect(policy).toMatch(/^default-src 'none';/);
      expect(policy).toContain("frame-ancestors 'none'");
    }
    for (const page of [MAP_PAGE_POLICY, DOCS_POLICY]) {
      for (const directive of ["object-src 'none'", "base-uri 'none'", "form-action 'none'", "script-src 'self'", "connect-src 'self'", "style-src 'self'"]) expect(page).toContain(directive);
    }
  });
});
