import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readTemplate } from './embedded-template.js';

/**
 * PostgreSQL 18 + PostGIS compiled to WebAssembly (PGlite), served over the PostgreSQL wire protocol
 * on a loopback port so the service's ordinary `pg` code runs on it unchanged.
 *
 * PGlite is a single session: the socket multiplexes clients message by message, so two clients
 * running queries at once can interleave their protocol messages. Callers must therefore use a pool
 * of exactly one connection (see `EMBEDDED_POOL_SIZE`).
 */
export const EMBEDDED_POOL_SIZE = 1;

export interface EmbeddedPostgres {
  url: string;
  /** True when this start created the database (a new DATA_DIR, or in memory). */
  created: boolean;
  /** The data directory as a gzipped tarball (what the template is made of). */
  dump(): Promise<Buffer>;
  /** PostgreSQL version string, for the boot log. */
  describe(): string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory holding the database files; in memory when undefined. */
  dataDir?: string;
  /**
   * Extra simultaneous socket connections tolerated while one is closing (tests open a fresh app
   * right after the previous one closed).
   */
  maxConnections?: number;
  /**
   * A new database starts from the build's template (PostGIS and the migrations in place) when there
   * is one for the current migrations; false starts empty (what the template itself is made from).
   */
  template?: boolean;
}

export async function startEmbeddedPostgres(options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  let location: string | undefined;
  if (options.dataDir) {
    location = resolve(options.dataDir);
    mkdirSync(location, { recursive: true });
    lockDataDir(location);
  }
  // PGlite writes PG_VERSION when it initialises a data directory: without it the database is new.
  const created = !location || !existsSync(`${location}/PG_VERSION`);
  const template = created && options.template !== false ? readTemplate() : undefined;
  // Loaded here, not at the top: a service on PostgreSQL (production) never needs PGlite's JavaScript, which would otherwise stay in its heap as source and code for the process's life.
  const [{ PGlite }, { postgis }, { btree_gist }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-postgis'),
    import('@electric-sql/pglite/contrib/btree_gist'),
    import('@electric-sql/pglite-socket'),
  ]);
  const db = await PGlite.create({
    ...(location ? { dataDir: location } : {}),
    ...(template ? { loadDataDir: new Blob([new Uint8Array(template)]) } : {}),
    extensions: { postgis, btree_gist },
  });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: options.maxConnections ?? 2 });
  await server.start();
  const url = `postgresql://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  return {
    url,
    created,
    describe: () =>
      `embedded PGlite (PostgreSQL 18 + PostGIS) at ${location ?? 'memory'}${created ? (template ? ', new, from the template' : ', new') : ''}`,
    async dump() {
      return Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
    },
    async stop() {
      // Clients first (done by the caller), then the socket, then the database itself.
      await server.stop();
      await db.close();
      if (location) unlockDataDir(location);
    },
  };
}

const LOCK_FILE = 'twin-service.pid';

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt it.
 * A pid file refuses that with a message, and is taken over when its process is gone.
 */
function lockDataDir(location: string): void {
  const holder = embeddedHolder(location);
  if (holder !== undefined) {
    throw new Error(`The embedded database in ${location} is in use by process ${holder}. Stop it first, or set DATABASE_URL.`);
  }
  writeFileSync(`${location}/${LOCK_FILE}`, String(process.pid));
}

/** The live process (not this one) that holds the embedded database in `location`, if any. */
export function embeddedHolder(location: string): number | undefined {
  let holder: number | undefined;
  try {
    holder = Number(readFileSync(`${resolve(location)}/${LOCK_FILE}`, 'utf8').trim());
  } catch {
    return undefined;
  }
  return holder && holder !== process.pid && processAlive(holder) ? holder : undefined;
}

function unlockDataDir(location: string): void {
  rmSync(`${location}/${LOCK_FILE}`, { force: true });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
