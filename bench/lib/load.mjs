// Benchmark data: a database per mode, loaded once and reused while the loader's parameters are
// unchanged (bench_meta holds their hash). Twins: public supplier places made by `generate-places` and
// loaded by `import-places` (the CLI, as an operator would), private twins of the tenant's big
// organization and of many small ones; timeline events in bulk SQL with time-ordered UUIDv7 ids;
// quests; an account, its membership and token.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Bump when the loader changes what it writes. */
const LOADER_VERSION = 4;

export const DATASETS = {
  quick: { twins: 100_000, places: 90_000, providers: 10, organizations: 1000, bigOrg: 5_000, eventTwins: 1_000, eventsPerTwin: 100, quests: 2_000 },
  full: { twins: 1_000_000, places: 900_000, providers: 10, organizations: 1000, bigOrg: 50_000, eventTwins: 10_000, eventsPerTwin: 100, quests: 2_000 },
};

export class DatabaseUnreachable extends Error {}

/** Runs a command; resolves with its stdout, rejects with its stderr tail on a non-zero exit. */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err = (err + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

export async function connect(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    throw new DatabaseUnreachable(`PostgreSQL is not reachable at ${url.replace(/\/\/[^@]*@/, '//…@')}: ${error.message}`);
  }
  return client;
}

const sha = (value) => createHash('sha256').update(value).digest('hex');

/**
 * Makes sure database `name` holds the dataset of `mode`; returns what the scenarios need
 * ({token, organizationId, twins…, boxes}). `cli` runs the service CLI with DATABASE_URL set.
 */
export async function ensureData({ base, name, mode, root, log }) {
  const dataset = DATASETS[mode];
  const hash = sha(JSON.stringify({ LOADER_VERSION, dataset }));
  const admin = await connect(`${base}/postgres`);
  const url = `${base}/${name}`;
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
    if (exists) {
      const db = await connect(url);
      try {
        const meta = await db.query(`SELECT value FROM bench_meta WHERE key = 'dataset'`).catch(() => ({ rows: [] }));
        const value = meta.rows[0]?.value;
        if (value?.hash === hash) {
          log(`data: ${name} is up to date (${dataset.twins} twins, loaded in ${value.loadSeconds} s on ${value.loadedAt}); reused`);
          return { url, ...value.info, loadSeconds: 0, cachedLoadSeconds: value.loadSeconds };
        }
      } finally {
        await db.end();
      }
      log(`data: ${name} is stale or incomplete; rebuilding`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      await admin.query(`DROP DATABASE ${name}`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }

  const started = Date.now();
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error', NODE_ENV: 'production' };
  const cli = (...args) => run(process.execPath, [join(root, 'dist/src/cli/main.js'), ...args], { env, cwd: root });
  // The CLI migrates the new database; its first organization is the first place provider.
  const first = JSON.parse(await cli('create-organization', '--name', 'Places 1'));
  const db = await connect(url);
  try {
    await db.query(`SET synchronous_commit = off`);
    const providers = [first.id];
    for (let i = 2; i <= dataset.providers; i++) {
      providers.push((await db.query(`INSERT INTO organizations (name) VALUES ($1) RETURNING id`, [`Places ${i}`])).rows[0].id);
    }
    const big = (await db.query(`INSERT INTO organizations (name) VALUES ('Bench tenant') RETURNING id`)).rows[0].id;
    const smallCount = dataset.organizations - dataset.providers - 1;
    await db.query(`INSERT INTO organizations (name) SELECT 'Small ' || i FROM generate_series(1, $1) i`, [smallCount]);

    // Places: generate-places + import-places, two at a time (two cores).
    const dir = join(tmpdir(), `twin-bench-${mode}`);
    await mkdir(dir, { recursive: true });
    const perProvider = Math.ceil(dataset.places / dataset.providers);
    const tPlaces = Date.now();
    let done = 0;
    const importOne = async (i) => {
      const file = join(dir, `places-${i}.geojson`);
      await cli('generate-places', '--count', String(perProvider), '--out', file, '--seed', `bench-${i}`);
      await cli('import-places', '--organization', providers[i], '--json', file);
      await rm(file, { force: true });
      log(`data: places ${++done}/${dataset.providers} imported (${Math.round((Date.now() - tPlaces) / 1000)} s)`);
    };
    const queue = providers.map((_, i) => i);
    await Promise.all([0, 1].map(async () => {
      while (queue.length > 0) await importOne(queue.shift());
    }));
    const placeSeconds = (Date.now() - tPlaces) / 1000;

    const account = (await db.query(`INSERT INTO accounts (name) VALUES ('Bench') RETURNING id`)).rows[0].id;
    await db.query(`INSERT INTO memberships (account_id, organization_id) VALUES ($1, $2)`, [account, big]);
    const token = `tw_bench${randomBytes(24).toString('base64url')}`;
    await db.query(`INSERT INTO access_tokens (account_id, token_hash) VALUES ($1, $2)`, [account, createHash('sha256').update(token).digest()]);

    // Private twins: the tenant's organization (a third created by the account, half located around
    // Paris) and the small organizations, created over the last 30 days.
    await db.query(
      `INSERT INTO twins (organization_id, owner_account_id, personal, name, description, location, characteristics, meta_data, created, modified)
       SELECT $1, CASE WHEN i % 3 = 0 THEN $2::uuid END, i % 3 = 0, 'Twin ' || i, 'A private twin of the bench tenant, number ' || i,
              CASE WHEN i % 2 = 0 THEN ST_SetSRID(ST_MakePoint(2.35 + (random() - 0.5) * 0.3, 48.85 + (random() - 0.5) * 0.2), 4326) END,
              ARRAY['outdoors', 'history'], jsonb_build_object('n', i), c, c
         FROM generate_series(1, $3) i, LATERAL (SELECT now() - random() * interval '30 days' AS c) t`,
      [big, account, dataset.bigOrg],
    );
    const smallTwins = dataset.twins - dataset.places - dataset.bigOrg;
    await db.query(
      `INSERT INTO twins (organization_id, name, description, characteristics, created, modified)
       SELECT o.id, 'Twin ' || i, 'A private twin of another organization', ARRAY['indoors'], c, c
         FROM generate_series(1, $1) i
         JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM organizations WHERE name LIKE 'Small %') o ON o.n = i % $2,
              LATERAL (SELECT now() - random() * interval '30 days' AS c) t`,
      [smallTwins, smallCount],
    );

    // Timeline events: eventsPerTwin for each of eventTwins twins of the tenant's organization, a
    // minute apart, ids UUIDv7 of their timestamp (48-bit ms, version 7, variant 10, random rest).
    const tEvents = Date.now();
    await db.query(`
      CREATE OR REPLACE FUNCTION bench_uuidv7(ts timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
        SELECT encode(set_bit(set_bit(set_bit(set_bit(
                 overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM ts) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
                 52, 1), 53, 1), 54, 1), 55, 0), 'hex')::uuid
      $$`);
    const eventTwins = (await db.query(`SELECT id FROM twins WHERE organization_id = $1 ORDER BY created DESC, id LIMIT $2`, [big, dataset.eventTwins])).rows.map((r) => r.id);
    const batch = 500;
    for (let i = 0; i < eventTwins.length; i += batch) {
      await db.query(
        `INSERT INTO events (id, organization_id, twin_id, name, category, data, "timestamp", modified)
         SELECT bench_uuidv7(ts), $1, tw, (ARRAY['walk', 'run', 'meal', 'sleep', 'visit'])[1 + k % 5], (ARRAY['activity', 'health', 'place'])[1 + k % 3],
                jsonb_build_object('steps', k * 37 % 9000, 'device', 'watch', 'route', jsonb_build_object('km', (k % 70) / 10.0)), ts, ts
           FROM unnest($2::uuid[]) WITH ORDINALITY AS w(tw, n), generate_series(1, $3) k,
                LATERAL (SELECT now() - (k * interval '1 minute') - (n * interval '1 millisecond') AS ts) t`,
        [big, eventTwins.slice(i, i + batch), dataset.eventsPerTwin],
      );
    }
    const eventSeconds = (Date.now() - tEvents) / 1000;

    // Quests on visible twins (places), every other one public.
    await db.query(
      `INSERT INTO quests (organization_id, twin_id, name, summary, description, public, price, created, modified)
       SELECT t.organization_id, t.id, 'Quest ' || n, 'A walk past ' || t.name, 'Start at ' || t.address, n % 2 = 0, (n % 20) + 0.5, c, c
         FROM (SELECT id, organization_id, name, address, row_number() OVER () AS n
                 FROM twins WHERE place_id IS NOT NULL ORDER BY id LIMIT $1) t,
              LATERAL (SELECT now() - random() * interval '30 days' AS c) x`,
      [dataset.quests],
    );

    log('data: VACUUM ANALYZE');
    await db.query('VACUUM ANALYZE');

    // Geo: boxes around the densest city holding about 1,000 and 10,000 located twins.
    const city = (await db.query(
      `SELECT city, avg(ST_X(location)) AS lon, avg(ST_Y(location)) AS lat, count(*)::int AS n
         FROM twins WHERE place_id IS NOT NULL GROUP BY city ORDER BY n DESC LIMIT 1`,
    )).rows[0];
    const boxAround = async (target) => {
      let low = 0.0005;
      let high = 60;
      let best;
      for (let i = 0; i < 30; i++) {
        const half = Math.sqrt(low * high);
        const box = [city.lon - half, city.lat - half * 0.7, city.lon + half, city.lat + half * 0.7].map((v) => Math.round(v * 1e6) / 1e6);
        const n = (await db.query(`SELECT count(*)::int AS n FROM twins WHERE location && ST_MakeEnvelope($1, $2, $3, $4, 4326)`, box)).rows[0].n;
        best = { box: box.join(','), count: n, half };
        if (Math.abs(n - target) / target < 0.05) break;
        if (n < target) low = half;
        else high = half;
      }
      return best;
    };
    const geo1k = await boxAround(1000);
    const geo10k = await boxAround(10000);
    const point = `${Math.round(city.lon * 1e6) / 1e6},${Math.round(city.lat * 1e6) / 1e6}`;
    const dist = Math.round(geo1k.half * 0.5 * 111_000);
    const distCount = (await db.query(
      `SELECT count(*)::int AS n FROM twins WHERE ST_DWithin(location::geography, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3)`,
      [city.lon, city.lat, dist],
    )).rows[0].n;

    const detailTwin = (await db.query(`SELECT id FROM twins WHERE place_id IS NOT NULL ORDER BY id LIMIT 1 OFFSET 1000`)).rows[0].id;
    const postTwin = (await db.query(`SELECT id FROM twins WHERE organization_id = $1 AND NOT (id = ANY ($2::uuid[])) LIMIT 1`, [big, eventTwins])).rows[0].id;
    const info = {
      token,
      accountId: account,
      organizationId: big,
      detailTwin,
      timelineTwin: eventTwins[0],
      postTwin,
      city: city.city,
      geo1k,
      geo10k,
      point,
      dist,
      distCount,
      counts: (await db.query(
        `SELECT (SELECT count(*)::int FROM twins) AS twins, (SELECT count(*)::int FROM organizations) AS organizations,
                (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM quests WHERE public) AS public_quests`,
      )).rows[0],
    };
    const loadSeconds = Math.round((Date.now() - started) / 100) / 10;
    await db.query(`CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)`);
    await db.query(`INSERT INTO bench_meta VALUES ('dataset', $1)`, [
      JSON.stringify({ hash, dataset, info, loadSeconds, placeSeconds, eventSeconds, loadedAt: new Date().toISOString() }),
    ]);
    log(`data: ${name} loaded in ${loadSeconds} s (places ${placeSeconds.toFixed(0)} s, events ${eventSeconds.toFixed(0)} s): ${JSON.stringify(info.counts)}`);
    return { url, ...info, loadSeconds };
  } finally {
    await db.end();
  }
}

/** Bump when prepare() changes what it writes (it never touches what the loader wrote). */
const PREPARE_VERSION = 4;
/** The keyset scenarios read page 1 and page DEEP_PAGE (or the deepest there is) of 50 items. */
export const DEEP_PAGE = 10_000;
export const DEEP_PAGE_SIZE = 50;
const EMBARK_QUESTS = 40;
const EMBARK_TASKS = 3;
const EMBARK_TWINS = 2000;
const OTHER_QUEST_TASKS = 5;

/**
 * The data the newer scenarios need, added to a loaded dataset without reloading it (idempotent; the
 * ids are kept in bench_meta under 'prepared'): the first place provider's organization, a twin of the
 * tenant with 200 connections, an event to PATCH, and public quests with tasks to embark on, with the
 * tenant's twins that embark on them. Plain SQL that keeps what the service keeps (tasks_supplied,
 * twin_counts through its triggers).
 */
export async function prepare(data, log) {
  const db = await connect(data.url);
  try {
    const stored = (await db.query(`SELECT value FROM bench_meta WHERE key = 'prepared'`)).rows[0]?.value;
    let prepared = stored?.version === PREPARE_VERSION ? stored : undefined;
    if (!prepared) {
      await db.query('BEGIN');
      const providerOrg = (await db.query(`SELECT id FROM organizations WHERE name = 'Places 1'`)).rows[0].id;
      const connections = (await db.query(`SELECT id FROM twins WHERE place_id IS NOT NULL ORDER BY id LIMIT 200 OFFSET 3000`)).rows.map((r) => r.id);
      await db.query(`DELETE FROM twins WHERE organization_id = $1 AND name IN ('Bench connected twin', 'Bench patched twin')`, [data.organizationId]);
      const connectedTwin = (await db.query(
        `INSERT INTO twins (organization_id, name, description, connections, characteristics) VALUES ($1, 'Bench connected twin', 'A twin with 200 connections', $2::uuid[], ARRAY['indoors']) RETURNING id`,
        [data.organizationId, connections],
      )).rows[0].id;
      const patchTwin = (await db.query(`INSERT INTO twins (organization_id, name) VALUES ($1, 'Bench patched twin') RETURNING id`, [data.organizationId])).rows[0].id;
      const patchEvent = (await db.query(
        `INSERT INTO events (id, organization_id, twin_id, name, category, data) VALUES (bench_uuidv7(now()), $1, $2, 'walk', 'activity', '{"steps": 1, "device": "watch"}') RETURNING id`,
        [data.organizationId, patchTwin],
      )).rows[0].id;
      // Quests to embark on: public originals, each with tasks at places no other embark quest uses.
      const quests = (await db.query(`SELECT id FROM quests WHERE public AND original_id IS NULL ORDER BY id LIMIT $1`, [EMBARK_QUESTS])).rows.map((r) => r.id);
      await db.query(`DELETE FROM revenue_entries WHERE quest_id = ANY ($1::uuid[])`, [quests]);
      await db.query(`DELETE FROM quests WHERE original_id = ANY ($1::uuid[])`, [quests]);
      await db.query(`DELETE FROM quest_tasks WHERE quest_id = ANY ($1::uuid[])`, [quests]);
      await db.query(
        `INSERT INTO quest_tasks (organization_id, quest_id, name, description, position, place_twin_id)
         SELECT (SELECT organization_id FROM quests WHERE id = q.id), q.id, 'Stop ' || k, 'Stop ' || k || ' of ' || q.n, k - 1, p.id
           FROM unnest($1::uuid[]) WITH ORDINALITY q(id, n), generate_series(1, $2::int) k,
                LATERAL (SELECT id FROM twins WHERE place_id IS NOT NULL ORDER BY id OFFSET 5000 + (q.n - 1) * $2 + k - 1 LIMIT 1) p`,
        [quests, EMBARK_TASKS],
      );
      // Every other original quest has tasks too (OTHER_QUEST_TASKS each, at places of their own), so
      // quest_tasks is not only the embark quests' 120 rows. With those alone, the ANALYZE of each embark
      // reset told the planner the table was tiny; the prepared embark statements' generic plans then read
      // the original's tasks by a sequential scan, every embark of a run added three rows to scan, and a
      // server's throughput fell run after run (the hand-written server alone, three runs in a row at 50
      // connections: 555, 424, 389 embarks/s, quest_tasks blocks read per embark 11 → 152), by
      // how many runs its connections had planned through, not by its code.
      const otherTasks = await db.query(`DELETE FROM quest_tasks WHERE name LIKE 'Bench task %' RETURNING place_twin_id`);
      const otherPlaces = (await db.query(`SELECT array_agg(id) AS ids FROM (SELECT id FROM twins WHERE place_id IS NOT NULL ORDER BY id OFFSET 20000 LIMIT 10000) p`)).rows[0].ids;
      await db.query(
        `INSERT INTO quest_tasks (organization_id, quest_id, name, description, position, place_twin_id)
         SELECT q.organization_id, q.id, 'Bench task ' || k, 'Task ' || k || ' of quest ' || q.n, k - 1, ($2::uuid[])[1 + (q.n * $3 + k) % cardinality($2::uuid[])]
           FROM (SELECT id, organization_id, row_number() OVER (ORDER BY id) AS n FROM quests WHERE original_id IS NULL AND NOT (id = ANY ($1::uuid[]))) q,
                generate_series(1, $3::int) k`,
        [quests, otherPlaces, OTHER_QUEST_TASKS],
      );
      await db.query(
        `UPDATE twins t SET tasks_supplied = (SELECT count(*)::int FROM quest_tasks k WHERE k.place_twin_id = t.id)
          WHERE t.id = ANY ($1::uuid[])`,
        [[...new Set([...otherPlaces, ...otherTasks.rows.map((r) => r.place_twin_id)])]],
      );
      // A timeline of a million events (100,000 on the quick data), a second apart, on a twin of its own:
      // the keyset scenarios read its first page and page 10,000.
      const long = data.counts.twins >= 1_000_000 ? 1_000_000 : 100_000;
      await db.query(`DELETE FROM twins WHERE organization_id = $1 AND name = 'Bench long timeline'`, [data.organizationId]);
      const longTimelineTwin = (await db.query(`INSERT INTO twins (organization_id, name) VALUES ($1, 'Bench long timeline') RETURNING id`, [data.organizationId])).rows[0].id;
      await db.query(
        `INSERT INTO events (id, organization_id, twin_id, name, category, data, "timestamp", modified)
         SELECT bench_uuidv7(ts), $1, $2, (ARRAY['walk', 'run', 'meal', 'sleep', 'visit'])[1 + k % 5], (ARRAY['activity', 'health', 'place'])[1 + k % 3],
                jsonb_build_object('steps', k * 37 % 9000, 'device', 'watch'), ts, ts
           FROM generate_series(1, $3::int) k, LATERAL (SELECT now() - k * interval '1 second' AS ts) t`,
        [data.organizationId, longTimelineTwin, long],
      );
      // The positions page DEEP_PAGE starts after: the row before its first one, in each list's order.
      const depth = (count) => (Math.min(DEEP_PAGE, Math.floor(count / DEEP_PAGE_SIZE)) - 1) * DEEP_PAGE_SIZE - 1;
      const timelineDepth = depth(long);
      const timelineDeep = (await db.query(
        `SELECT json_build_array("timestamp"::text, id::text) AS position FROM events WHERE twin_id = $1 ORDER BY "timestamp" DESC, id DESC OFFSET $2 LIMIT 1`,
        [longTimelineTwin, timelineDepth],
      )).rows[0].position;
      const visible = (await db.query(`SELECT count(*)::int AS n FROM twins t WHERE t.public OR cardinality(t.services) > 0 OR t.organization_id = $1`, [data.organizationId])).rows[0].n;
      const twinsDepth = depth(visible);
      // Newest first: page 1 and the deep page both hold imported places (the oldest visible twins are the
      // tenant's own, smaller rows), so the pair compares depth, not row sizes.
      const twinsDeep = (await db.query(
        `SELECT json_build_array(created::text, id::text) AS position FROM twins t WHERE t.public OR cardinality(t.services) > 0 OR t.organization_id = $1
          ORDER BY created DESC, id DESC OFFSET $2 LIMIT 1`,
        [data.organizationId, twinsDepth],
      )).rows[0].position;
      const deep = { timeline: { page: (timelineDepth + 1) / DEEP_PAGE_SIZE + 1, position: timelineDeep }, twins: { page: (twinsDepth + 1) / DEEP_PAGE_SIZE + 1, position: twinsDeep } };
      prepared = { version: PREPARE_VERSION, providerOrg, connectedTwin, patchTwin, patchEvent, embarkQuests: quests, longTimelineTwin, longTimeline: long, deep };
      await db.query(`INSERT INTO bench_meta VALUES ('prepared', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [JSON.stringify(prepared)]);
      await db.query('COMMIT');
      // After the commit: the reset vacuums, which no transaction block may hold.
      await resetEmbarks(db, quests);
      await db.query('VACUUM ANALYZE twins, events, quests, quest_tasks, twin_counts');
      log(`data: prepared the extra scenario data in ${data.url.split('/').pop()}`);
    } else if ((await db.query(`SELECT EXISTS (SELECT 1 FROM quests WHERE original_id = ANY ($1::uuid[])) AS left`, [prepared.embarkQuests])).rows[0].left) {
      // The last run's embark scenario ends with its copies in place (about 14,000 after a full run). Left
      // there, they are the next run's data until its own embark reset: the quest feed's statements hash
      // every quest to find originals, and measured 140 rps on both servers where a clean table gave 400-670.
      await resetEmbarks(db, prepared.embarkQuests);
      log(`data: removed the last run's embarks from ${data.url.split('/').pop()}`);
    }
    // The twins that embark: the tenant's, except those the other scenarios act as.
    const embarkTwins = (await db.query(
      `SELECT id FROM twins WHERE organization_id = $1 AND NOT (id = ANY ($2::uuid[])) ORDER BY id LIMIT $3`,
      [data.organizationId, [data.timelineTwin, data.postTwin, prepared.patchTwin, prepared.connectedTwin, prepared.longTimelineTwin], EMBARK_TWINS],
    )).rows.map((r) => r.id);
    // The ETag of the detail twin (its version, as the service tags it): the 304 scenario's If-None-Match.
    const detailEtag = (await db.query(
      `SELECT '"' || (extract(epoch FROM modified) * 1000000)::bigint || '.' || tasks_supplied || '"' AS etag FROM twins WHERE id = $1`,
      [data.detailTwin],
    )).rows[0].etag;
    return { ...data, ...prepared, embarkTwins, detailEtag };
  } catch (error) {
    await db.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await db.end();
  }
}

/**
 * Waits until neither server has had a statement running for 300 ms (at most `limitMs`), and says how
 * long that took. When a load stops, the requests still queued in a server go on: the hand-written
 * server's geo ~10k listings at 50 connections took ~10 s each, so PostgreSQL went on computing them for
 * seconds into the next server's measurement (the distance listing after them measured 0.66-0.70 of the
 * hand-written server, 0.86 when run alone).
 */
export async function waitQuiet(db, limitMs = 60_000) {
  const started = Date.now();
  for (let quiet = 0; quiet < 3 && Date.now() - started < limitMs; ) {
    const busy = (await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' AND application_name IN ('twin-service', 'twin-bench-raw')`,
    )).rows[0].n;
    quiet = busy === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

/**
 * Lets PostgreSQL settle before anything is measured: writes out the dirty buffers a load left
 * (CHECKPOINT), then waits (at most `limitMs`) until no autovacuum worker runs. Without it, the first
 * rows of a run that starts right after a dataset was loaded were measured while the checkpointer and
 * autovacuum worked through the load (twin detail +54 % / -58 % between the sizes in such a run, within
 * 5 % when measured again). Says what it waited for.
 */
export async function settle(db, limitMs = 300_000) {
  const started = Date.now();
  await db.query('CHECKPOINT');
  let vacuums = 0;
  for (;;) {
    const running = (await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`)).rows[0].n;
    if (running === 0 || Date.now() - started > limitMs) break;
    vacuums = Math.max(vacuums, running);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { ms: Date.now() - started, vacuums };
}

/**
 * Undoes every embark on the embark quests (copies with their tasks, revenue entries, the places'
 * tasks_supplied), so each measured run starts from the same state.
 */
export async function resetEmbarks(db, quests) {
  // Requests a server still had queued when the load stopped would commit embarks after the reset.
  await waitQuiet(db, 15_000);
  await db.query(`DELETE FROM revenue_entries WHERE quest_id = ANY ($1::uuid[])`, [quests]);
  await db.query(`DELETE FROM quests WHERE original_id = ANY ($1::uuid[])`, [quests]);
  await db.query(
    `UPDATE twins t SET tasks_supplied = c.n
       FROM (SELECT p.id, (SELECT count(*)::int FROM quest_tasks k WHERE k.place_twin_id = p.id) AS n
               FROM (SELECT DISTINCT place_twin_id AS id FROM quest_tasks WHERE quest_id = ANY ($1::uuid[])) p) c
      WHERE t.id = c.id AND t.tasks_supplied <> c.n`,
    [quests],
  );
  // The same database state for each server's run: without these, the dead rows of the reset and the
  // full-page writes after the next checkpoint fall on whichever server runs when autovacuum or the
  // checkpointer happens to start (embark ratios moved by ±0.3 from run to run).
  await db.query('VACUUM (ANALYZE) quests, quest_tasks, revenue_entries, twins');
  await db.query('CHECKPOINT');
}
