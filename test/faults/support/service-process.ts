import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { onProcessExit } from './cleanup';
import { dyingWithParent } from './orphans';
import { now } from './clock';

/** The compiled service: FAULTS_DIST (a folder laid out like dist/), else <repo>/dist. */
export function distDir(): string {
  const dist = resolve(process.env.FAULTS_DIST ?? join(__dirname, '..', '..', '..', 'dist'));
  if (!existsSync(join(dist, 'src', 'main.js'))) {
    throw new Error(`${dist}/src/main.js not found: run \`npm run build\` first (npm run test:faults does)`);
  }
  return dist;
}

/** The V8 heap bounds the production image runs with, read from the Dockerfile (one source of truth), so memory is measured as deployed. */
export const PRODUCTION_NODE_OPTIONS =
  /^ENV NODE_OPTIONS="([^"]*)"/m.exec(readFileSync(join(__dirname, '..', '..', '..', 'Dockerfile'), 'utf8'))?.[1] ?? '';

/** Only what the service needs: nothing leaks in from the caller's environment (REDIS_URL, DATABASE_URL…). */
function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TZ: 'UTC',
    NODE_ENV: 'production',
    NODE_OPTIONS: process.env.FAULTS_NODE_OPTIONS ?? PRODUCTION_NODE_OPTIONS,
    ...extra,
  };
}

export interface Bootstrap {
  organizationId: string;
  accountId: string;
  twinId: string;
  tokenId: string;
  token: string;
}

/** `node dist/src/cli/main.js bootstrap --json`: an organization, an account, a twin and a token. */
export function bootstrapTenant(databaseUrl: string, name = 'Faults'): Promise<Bootstrap> {
  const cli = join(distDir(), 'src', 'cli', 'main.js');
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [cli, 'bootstrap', '--json', '--organization', `${name} organization`, '--account', `${name} account`, '--twin', `${name} twin`],
      { // The CLI builds the application module, metrics listener included: on 9464 it collides with any service running there.
      env: serviceEnv({ DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '2', LOG_LEVEL: 'error', METRICS_PORT: '0' }), timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`bootstrap failed: ${error.message}\n${stderr}`));
        try {
          resolvePromise(JSON.parse(stdout.trim().split('\n').pop() ?? '') as Bootstrap);
        } catch {
          reject(new Error(`bootstrap printed no JSON: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Clock time (see clock.ts) when the process exited. */
  at: number;
}

/** The service as deployed: `node dist/src/main.js` as a child process on 127.0.0.1. */
export class ServiceProcess {
  readonly exited: Promise<ExitInfo>;
  private output = '';
  private exitInfo: ExitInfo | undefined;

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    this.exited = new Promise((resolvePromise) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal, at: now() };
        resolvePromise(this.exitInfo);
      });
    });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-64 * 1024);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    onProcessExit(() => {
      if (!this.exitInfo) child.kill('SIGKILL');
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The last 64 KiB of its stdout and stderr. */
  get logs(): string {
    return this.output;
  }

  static async start(options: { port: number; databaseUrl: string; env?: Record<string, string> }): Promise<ServiceProcess> {
    const env = serviceEnv({
      PORT: String(options.port),
      HOST: '127.0.0.1',
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOL_SIZE: '10',
      RATE_LIMIT_MAX: '0',
      LOG_LEVEL: 'warn',
      // Several services on one machine: no metrics listeners (they would all want 9464).
      METRICS_PORT: '0',
      ...options.env,
    });
    // Killed with the test process however that dies (cleanup.ts's hooks do not fire inside Jest).
    const [file, args] = dyingWithParent(process.execPath, [join(distDir(), 'src', 'main.js')], 'KILL');
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const service = new ServiceProcess(child, options.port);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (service.hasExited) throw new Error(`service exited during start-up:\n${service.logs}`);
      if ((await probe(options.port)) !== undefined) return service;
      await sleep(100);
    }
    await service.kill('SIGKILL');
    throw new Error(`service did not answer /health within 60 s:\n${service.logs}`);
  }

  /** Resident set size in KiB (VmRSS from /proc/<pid>/status). */
  rssKb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (!match) throw new Error(`no VmRSS for pid ${this.pid}`);
    return Number(match[1]);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.hasExited) this.child.kill(signal);
  }

  /** Stops it if it still runs: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<ExitInfo> {
    if (this.exitInfo) return this.exitInfo;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** GET /health status, or undefined when nothing answers. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolvePromise) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', method: 'GET', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolvePromise(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolvePromise(undefined));
    req.end();
  });
}

export const sleep = (ms: number) => new Promise<void>((resolvePromise) => setTimeout(resolvePromise, ms));
