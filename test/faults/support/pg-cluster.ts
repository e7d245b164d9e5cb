import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { onProcessExit } from './cleanup';

/**
 * A throwaway PostgreSQL cluster of its own: `initdb` into a temporary folder, `pg_ctl start` on a
 * free loopback port (55432 and up) with its unix socket inside that folder. Stopping it disturbs no
 * other database on the machine. Needs PostgreSQL with PostGIS installed (PG_BIN overrides the
 * binaries folder). As root, the server runs as the `postgres` user (initdb refuses root).
 */
export class PgCluster {
  private running = false;
  private destroyed = false;
  private frozen: number[] = [];

  private constructor(
    readonly dir: string,
    readonly bin: string,
    readonly port: number,
    private readonly asUser: string | undefined,
  ) {}

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  get socketDir(): string {
    return join(this.dir, 'sock');
  }

  get logFile(): string {
    return join(this.dir, 'postgres.log');
  }

  url(database: string): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async create(): Promise<PgCluster> {
    const bin = postgresBinaries();
    const asUser = process.getuid?.() === 0 ? 'postgres' : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'twin-faults-pg-'));
    const cluster = new PgCluster(dir, bin, await freePort(55432), asUser);
    onProcessExit(() => cluster.destroySync());
    try {
      if (asUser) chownTree(dir, asUser);
      await cluster.run('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
      await cluster.run('bash', ['-c', `mkdir -p '${cluster.socketDir}'`]);
      await cluster.start();
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  /**
   * A hot standby of `primary`: `pg_basebackup -R -X stream` from it (initdb trusts replication
   * connections from 127.0.0.1) instead of initdb, then started on a free port of its own.
   */
  static async standbyOf(primary: PgCluster): Promise<PgCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'twin-faults-standby-'));
    const standby = new PgCluster(dir, primary.bin, await freePort(primary.port + 100), primary.asUser);
    onProcessExit(() => standby.destroySync());
    try {
      if (standby.asUser) chownTree(dir, standby.asUser);
      await standby.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.dataDir, '-R', '-X', 'stream', '--no-sync', '-c', 'fast']);
      await standby.run('bash', ['-c', `mkdir -p '${standby.socketDir}'`]);
      await standby.start();
    } catch (error) {
      await standby.destroy();
      throw error;
    }
    return standby;
  }

  /** Starts the server and waits until it accepts connections (a standby: once it accepts reads). */
  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.socketDir} -c listen_addresses=127.0.0.1 -c max_connections=50 -c shared_buffers=32MB`;
    await this.run('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', this.logFile, '-w', '-t', '60', 'start']);
    this.running = true;
  }

  /** `pg_ctl stop -m <mode>`: `immediate` kills the server without a clean shutdown (crash recovery on restart). */
  async stop(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    await this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
    this.running = false;
  }

  /**
   * SIGSTOP to the postmaster and every backend: connections stay open, nothing is answered, and new
   * connections are accepted by the kernel (listen backlog) but never greeted — a frozen host, a
   * paused VM. The postmaster first, so it forks nothing while its children are being stopped.
   */
  freeze(): number[] {
    const postmaster = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(postmaster, 'SIGSTOP');
    const children = execFileSync('pgrep', ['-P', String(postmaster)]).toString().trim().split('\n').filter(Boolean).map(Number);
    for (const pid of children) process.kill(pid, 'SIGSTOP');
    this.frozen = [postmaster, ...children];
    return this.frozen;
  }

  /** SIGCONT to what freeze() stopped, the backends first. */
  thaw(): void {
    for (const pid of [...this.frozen].reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // A backend that ended (its client went away) while frozen.
      }
    }
    this.frozen = [];
  }

  async createDatabase(name: string): Promise<void> {
    await this.withClient('postgres', (client) => client.query(`CREATE DATABASE ${name}`));
  }

  async withClient<T>(database: string, use: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return await use(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Last lines of the server log, for failure messages. */
  logTail(lines = 20): string {
    try {
      return readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.thaw();
    if (this.running || existsSync(join(this.dataDir, 'postmaster.pid'))) await this.stop('immediate').catch(() => undefined);
    this.destroyed = true;
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Last-resort cleanup when the test process exits without reaching destroy(). */
  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.thaw();
    try {
      if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
        execFileSync(...this.command('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore', timeout: 10_000 });
      }
    } catch {
      // best effort
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private command(tool: string, args: string[]): [string, string[]] {
    const executable = tool === 'bash' ? 'bash' : join(this.bin, tool);
    return this.asUser ? ['runuser', ['-u', this.asUser, '--', executable, ...args]] : [executable, args];
  }

  private run(tool: string, args: string[]): Promise<string> {
    const [file, argv] = this.command(tool, args);
    return new Promise((resolve, reject) => {
      execFile(file, argv, { timeout: 120_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${tool} ${args.join(' ')} failed: ${error.message}\n${stderr}\n${this.logTail()}`));
        else resolve(stdout);
      });
    });
  }
}

/**
 * The PostgreSQL binaries folder: PG_BIN, else the newest /usr/lib/postgresql/<major>/bin whose major
 * has PostGIS installed, else `pg_config --bindir`.
 */
function postgresBinaries(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    const withPostgis = majors.find((major) => existsSync(`/usr/share/postgresql/${major}/extension/postgis.control`));
    if (withPostgis ?? majors[0]) return join(root, withPostgis ?? majors[0], 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('PostgreSQL binaries not found: install PostgreSQL 15+ with PostGIS, or set PG_BIN');
  }
}

function chownTree(dir: string, user: string): void {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  if (userInfo().uid === uid) return;
  chownSync(dir, uid, gid);
}

/** The first port from `from` that nobody listens on at 127.0.0.1 (0 = any free port). */
export async function freePort(from = 0): Promise<number> {
  for (let port = from; port < from + 200 || from === 0; port++) {
    const got = await new Promise<number | undefined>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
      });
    });
    if (got !== undefined) return got;
    if (from === 0) break;
  }
  throw new Error(`no free port from ${from}`);
}
