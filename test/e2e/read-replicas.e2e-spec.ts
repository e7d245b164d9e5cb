import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Metrics } from '../../src/common/metrics/metrics';
import { Database } from '../../src/database/database';
import { ReadReplicas } from '../../src/database/read-replicas';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { loadConfig } from '../../src/config/app-config';
import { embeddedDatabase, TestApp } from '../support/test-app';

/**
 * `Sql.replicaQuery` routing (DATABASE_REPLICA_URLS): replicas here are the test database itself under
 * another connection name, so which pool answered is visible as `application_name`. A real streaming
 * replica (pg_basebackup, lag) is exercised by `npm run test:cluster`.
 */
const APPLICATION = "SELECT current_setting('application_name') AS name";

/** A loopback port nobody listens on: connections are refused at once, as to a replica that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// PGlite is one session behind one socket: it has no second connection to offer a replica pool.
const describeOnPostgres = embeddedDatabase() ? describe.skip : describe;

describeOnPostgres('read replicas (Sql.replicaQuery)', () => {
  const url = process.env.TEST_DATABASE_URL!;
  const apps: TestApp[] = [];
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  const start = async (replicaUrls: string[]) => {
    const app = await TestApp.start({ DATABASE_REPLICA_URLS: replicaUrls.join(',') });
    apps.push(app);
    return { sql: app.app.get(Sql), replicas: app.app.get(Database).replicas!, app };
  };
  const nameOf = async (run: Promise<{ name: string }[]>) => (await run)[0].name;
  const NAME = rowShape({ name: 'text' });

  it('sends lag-tolerant reads to the replicas round-robin, with parameters (prepared statements) as on the primary', async () => {
    const { sql, replicas } = await start([url, url]);
    expect(await nameOf(sql.rows(NAME, APPLICATION))).toBe('twin-service');
    for (let i = 0; i < 4; i++) expect(await nameOf(sql.replicaRows(NAME, APPLICATION))).toBe('twin-service replica');
    for (let i = 0; i < 4; i++) {
      const [row] = await sql.replicaRows(rowShape({ n: 'integer' }), 'SELECT $1::int + 1 AS n', [i]);
      expect(row.n).toBe(i + 1);
    }
    expect(replicas.stats().map((replica) => replica.queries)).toEqual([4, 4]);
    expect(replicas.stats().every((replica) => replica.failures === 0 && !replica.down)).toBe(true);
  });

  it('inside a transaction uses the transaction: its own uncommitted rows, never a replica', async () => {
    const { sql, replicas } = await start([url]);
    const id = randomUUID();
    const before = replicas.stats()[0].queries;
    const seen = await sql.transaction(async () => {
      await sql.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, `replica ${id}`]);
      const rows = await sql.replicaRows(rowShape({ id: 'uuid' }), 'SELECT id FROM organizations WHERE id = $1', [id]);
      const [{ name }] = await sql.replicaRows(NAME, APPLICATION);
      throw Object.assign(new Error('roll back'), { seen: { rows: rows.length, name } });
    }).catch((error: { seen: { rows: number; name: string } }) => error.seen);
    expect(seen).toEqual({ rows: 1, name: 'twin-service' });
    expect(replicas.stats()[0].queries).toBe(before);
  });

  it('answers from the primary when a replica is down, leaves it out for a while, and uses the others', async () => {
    const down = `postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`;
    const { sql, replicas } = await start([down, url]);
    const names: string[] = [];
    for (let i = 0; i < 6; i++) names.push(await nameOf(sql.replicaRows(NAME, APPLICATION)));
    // The first read went to the dead replica and was answered by the primary; from then on only the live one.
    expect(names).toEqual(['twin-service', ...Array(5).fill('twin-service replica')]);
    expect(replicas.stats()).toEqual([
      { name: 'replica 1', queries: 1, failures: 1, down: true },
      { name: 'replica 2', queries: 5, failures: 0, down: false },
    ]);
  });

  it('shows each replica on /metrics by its place in the list: pool, in use or left out, reads and fallbacks', async () => {
    const down = `postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`;
    const { sql, app } = await start([down, url]);
    for (let i = 0; i < 3; i++) await sql.replicaQuery(APPLICATION);
    const text = await app.app.get(Metrics).registry.metrics();
    const sample = (series: string) => Number(text.split('\n').find((line) => line.startsWith(`${series} `))?.split(' ').pop());
    expect(sample('db_replica_up{replica="1"}')).toBe(0);
    expect(sample('db_replica_up{replica="2"}')).toBe(1);
    expect(sample('db_replica_reads_total{replica="1"}')).toBe(1);
    expect(sample('db_replica_fallbacks_total{replica="1"}')).toBe(1);
    expect(sample('db_replica_reads_total{replica="2"}')).toBe(2);
    expect(sample('db_replica_fallbacks_total{replica="2"}')).toBe(0);
    expect(sample('db_replica_pool_connections{replica="2",state="total"}')).toBeGreaterThanOrEqual(1);
    expect(sample('db_replica_pool_connections{replica="1",state="total"}')).toBe(0);
    expect(sample('db_replica_pool_waiting_requests{replica="2"}')).toBe(0);
    // The URLs (credentials, hosts) never appear.
    expect(text).not.toContain('nowhere');
  });

  it('with every replica down, every read still succeeds on the primary', async () => {
    const { sql, replicas } = await start([`postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`]);
    for (let i = 0; i < 3; i++) expect(await nameOf(sql.replicaRows(NAME, APPLICATION))).toBe('twin-service');
    expect(replicas.stats()[0]).toMatchObject({ queries: 1, failures: 1, down: true });
  });

  it('through HTTP: the map listing, tiles and their bounds, and the quest feed read from the replica; every other read from the primary', async () => {
    const { replicas, app } = await start([url]);
    const tenant = await app.tenant();
    const replicaReads = () => replicas.stats()[0].queries;
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const before = replicaReads();
      const response = await app.inject({ method: 'GET', url: path, headers: { ...tenant.headers({ twin: true }), ...headers } });
      expect([200, 204]).toContain(response.statusCode);
      return replicaReads() - before;
    };
    const lagTolerant = {
      'geo listing': await get('/twins/?in_bbox=-10,-10,10,10', { accept: 'application/geo+json' }),
      tile: await get('/twins/tiles/0/0/0.mvt'),
      'tile bounds': await get('/twins/tiles.json'),
      'quest feed': await get('/quests/'),
    };
    for (const [route, reads] of Object.entries(lagTolerant)) expect({ route, reads: reads > 0 }).toEqual({ route, reads: true });
    // Reads a caller may make right after their own write: never a replica.
    const own = {
      'twin list': await get('/twins/'),
      'own twins': await get('/my/twins/'),
      'twin detail': await get(`/twins/${tenant.twinId}/`),
      'own quests': await get('/my/quests/'),
      timeline: await get('/events/'),
    };
    for (const [route, reads] of Object.entries(own)) expect({ route, reads }).toEqual({ route, reads: 0 });
  });

  it('a statement the database refuses is an error, not a fallback', async () => {
    const { sql, replicas } = await start([url]);
    await expect(sql.replicaQuery('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    expect(replicas.stats()[0]).toMatchObject({ queries: 1, failures: 0, down: false });
  });
});

describe('DATABASE_REPLICA_URLS configuration', () => {
  it('reads a comma-separated list and refuses entries that are not PostgreSQL URLs, or replicas without a primary', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://a/b', DATABASE_REPLICA_URLS: ' postgresql://r1/b, postgres://r2/b ' }).databaseReplicaUrls).toEqual([
      'postgresql://r1/b',
      'postgres://r2/b',
    ]);
    expect(loadConfig({ DATABASE_URL: 'postgresql://a/b' }).databaseReplicaUrls).toEqual([]);
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://a/b', DATABASE_REPLICA_URLS: 'postgresql://r1/b,http://r2/b' })).toThrow(
      /DATABASE_REPLICA_URLS entry 2 must be a postgres: or postgresql: URL/,
    );
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgresql://r1/b' })).toThrow(/DATABASE_REPLICA_URLS needs DATABASE_URL/);
  });

  it('opens nothing without replicas', () => {
    expect(ReadReplicas.open([], { poolSize: 1, statementTimeoutMs: 1000, readTimeoutMs: 2000, preparedStatements: true })).toBeUndefined();
  });
});
