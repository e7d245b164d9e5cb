import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { onProcessExit } from './cleanup';
import { dyingWithParent } from './orphans';
import { freePort } from './pg-cluster';
import { sleep } from './service-process';

/** Debian's redis-server; REDIS_SERVER_BIN overrides. */
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';

/**
 * A Redis of its own: `redis-server` as a child process on a free loopback port, nothing persisted
 * (`--save "" --appendonly no`, working folder under the system's temporary folder). The machine's own
 * Redis (6379) is never touched. `restart()` starts it again on the same port (a Redis that comes back).
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private exited: Promise<unknown> = Promise.resolve();
  private output = '';
  private destroyed = false;
  private readonly client: Redis;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    // For the test's own reads; lazily connected, reconnects on its own after a restart.
    this.client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    this.client.on('error', () => undefined);
    onProcessExit(() => this.destroySync());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  /** The last lines redis-server printed, for failure messages. */
  get logs(): string {
    return this.output;
  }

  static async start(): Promise<RedisServer> {
    if (!existsSync(REDIS_SERVER)) {
      throw new Error(`redis-server not found at ${REDIS_SERVER}: install it with \`apt-get install -y redis-server\`, or set REDIS_SERVER_BIN`);
    }
    const server = new RedisServer(mkdtempSync(join(tmpdir(), 'twin-faults-redis-')), await freePort(56379));
    await server.launch();
    return server;
  }

  /** Starts redis-server (again) on the same port and waits until it answers PING. */
  async restart(): Promise<void> {
    await this.launch();
  }

  private async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--daemonize', 'no'];
    // SIGKILL if the test process dies: it works on a frozen (SIGSTOPped) Redis too.
    const child = spawn(...dyingWithParent(REDIS_SERVER, args, 'KILL'), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exitInfo = undefined;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      }),
    );
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-8 * 1024);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !this.exitInfo) {
      if (await this.client.ping().then(() => true, () => false)) return;
      await sleep(50);
    }
    throw new Error(`redis-server did not answer PING on ${this.port}:\n${this.output}`);
  }

  /** SIGSTOP: the process stays, its connections stay open, nothing is answered — a partition or a stuck host. */
  freeze(): void {
    process.kill(this.pid, 'SIGSTOP');
  }

  thaw(): void {
    process.kill(this.pid, 'SIGCONT');
  }

  /** The process state letter from /proc/<pid>/stat (`T` = stopped). */
  state(): string {
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  }

  /** A clean stop (SIGTERM: Redis closes its connections and exits); waits for the exit. */
  async terminate(): Promise<void> {
    if (!this.child || this.exitInfo) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Sum of the counters under `pattern`, read by the test's own connection. */
  async sumOf(pattern: string): Promise<number> {
    const keys = await this.client.keys(pattern);
    if (keys.length === 0) return 0;
    const values = await this.client.mget(keys);
    return values.reduce((sum, value) => sum + Number(value ?? 0), 0);
  }

  async stop(): Promise<void> {
    if (this.destroyed) return;
    this.client.disconnect();
    if (this.child && !this.exitInfo) {
      // A frozen Redis does not act on SIGTERM until it runs again.
      this.thawQuietly();
      await this.terminate();
    }
    this.destroySync();
  }

  private thawQuietly(): void {
    try {
      this.thaw();
    } catch {
      // already gone
    }
  }

  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.child && !this.exitInfo) {
      this.thawQuietly();
      this.child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
