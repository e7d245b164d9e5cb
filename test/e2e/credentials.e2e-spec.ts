import { embeddedDatabase, expectError, TestApp, TestTenant } from '../support/test-app';

/**
 * Credentials are resolved once and then served from the instance's cache (src/common/auth/credentials.ts);
 * every change that can make a cached answer wrong reaches the cache through PostgreSQL's NOTIFY, however
 * it was made. These tests make the changes with plain SQL, as an operator or another instance would.
 */
describe('credentials cache', () => {
  let service: TestApp;

  beforeAll(async () => {
    service = await TestApp.start();
  }, 60_000);
  afterAll(() => service?.close());

  const sql = (text: string, values: unknown[]) => service.dataSource.query(text, values);
  const organizations = (tenant: TestTenant, headers = tenant.headers()) => service.inject({ method: 'GET', url: '/organizations/', headers });
  const events = (tenant: TestTenant) => service.inject({ method: 'GET', url: '/events/', headers: tenant.headers({ twin: true }) });

  /** The status the service settles on within two seconds (a notice takes milliseconds). */
  async function settlesOn(request: () => ReturnType<TestApp['inject']>, status: number): Promise<void> {
    const deadline = Date.now() + 2000;
    let last = await request();
    while (last.statusCode !== status && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      last = await request();
    }
    expectError(last, status);
  }

  (embeddedDatabase() ? it.skip : it)('answers a repeated request from the cache: a change the triggers do not announce is not seen (needs real PostgreSQL)', async () => {
    const tenant = await service.tenant();
    expect((await organizations(tenant)).statusCode).toBe(200);
    // With session_replication_role = replica the triggers do not fire: the cache is not told.
    await service.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      await manager.query(`UPDATE access_tokens SET revoked = now() WHERE id = $1`, [tenant.tokenId]);
    });
    expect((await organizations(tenant)).statusCode).toBe(200);
    // Other tenant headers are another lookup, made in the database: refused.
    expectError(await organizations(tenant, { authorization: `Token ${tenant.token}` }), 401);
  });

  it('a token revoked with plain SQL is refused', async () => {
    const tenant = await service.tenant();
    expect((await organizations(tenant)).statusCode).toBe(200);
    await sql(`UPDATE access_tokens SET revoked = now() WHERE id = $1`, [tenant.tokenId]);
    await settlesOn(() => organizations(tenant), 401);
  });

  it('a membership deleted with plain SQL is refused (403 on X-Organization)', async () => {
    const tenant = await service.tenant();
    expect((await organizations(tenant)).statusCode).toBe(200);
    await sql(`DELETE FROM memberships WHERE account_id = $1 AND organization_id = $2`, [tenant.accountId, tenant.organizationId]);
    await settlesOn(() => organizations(tenant), 403);
  });

  it('a twin moved to another organization can no longer be acted as (403 on X-Twin)', async () => {
    const tenant = await service.tenant();
    const other = await service.tenant({ organization: 'Elsewhere' });
    expect((await events(tenant)).statusCode).toBe(200);
    await sql(`UPDATE twins SET organization_id = $2 WHERE id = $1`, [tenant.twinId, other.organizationId]);
    await settlesOn(() => events(tenant), 403);
  });

  it('a token that expires stops working then, with nothing changed in the database', async () => {
    const tenant = await service.tenant();
    await sql(`UPDATE access_tokens SET expires = now() + interval '1.5 seconds' WHERE id = $1`, [tenant.tokenId]);
    // The first answer fills the cache, the second comes from it.
    expect((await organizations(tenant)).statusCode).toBe(200);
    expect((await organizations(tenant)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expectError(await organizations(tenant), 401);
  });
});
