import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onProcessExit } from '../../faults/support/cleanup';
import { dyingWithParent } from '../../faults/support/orphans';
import { freePort } from '../../faults/support/pg-cluster';
import { sleep } from '../../faults/support/service-process';

const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/** The recommended proxy configuration kept in the repository; the test runs exactly this file. */
export const SITE_CONFIG = join(__dirname, '..', '..', '..', 'deploy', 'nginx', 'twin-service.conf');

/**
 * The repository's site file with the example upstream servers replaced by `ports` (keeping each
 * line's parameters) and the listen directive bound to 127.0.0.1:`listen`. Fails if the file no longer
 * has the shape this relies on, so the test cannot silently run some other configuration.
 */
export function siteConfig(ports: number[], listen: number): string {
  const text = readFileSync(SITE_CONFIG, 'utf8');
  const servers = [...text.matchAll(/^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;$/gm)];
  if (servers.length === 0 || !/^\s*listen 80;$/m.test(text)) throw new Error(`${SITE_CONFIG}: no upstream server lines or no "listen 80;"`);
  const [indent, parameters = ''] = [servers[0][1], servers[0][2]];
  const upstream = ports.map((port) => `${indent}server 127.0.0.1:${port}${parameters};`).join('\n');
  let replaced = false;
  return text
    .replace(/^\s*server 127\.0\.0\.1:\d+( [^;]*)?;\n/gm, () => (replaced ? '' : ((replaced = true), `${upstream}\n`)))
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listen};`);
}

/**
 * nginx as a child process (`-g 'daemon off;'`, `-p <temporary prefix>`), the repository's site file
 * included in a minimal main configuration; its own process group so the workers go with it.
 */
export class Proxy {
  readonly exited: Promise<unknown>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private output = '';
  private destroyed = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      }),
    );
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-16 * 1024);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    onProcessExit(() => this.destroySync());
  }

  static async start(upstreamPorts: number[]): Promise<Proxy> {
    if (!existsSync(NGINX)) throw new Error(`nginx not found at ${NGINX}: npm run test:cluster installs it (apt-get install -y nginx), or set NGINX_BIN`);
    const dir = mkdtempSync(join(tmpdir(), 'twin-cluster-nginx-'));
    // As root the workers run unprivileged and must enter the prefix to create their buffer folders.
    chmodSync(dir, 0o755);
    const port = await freePort();
    writeFileSync(join(dir, 'twin-service.conf'), siteConfig(upstreamPorts, port));
    const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
    writeFileSync(
      join(dir, 'nginx.conf'),
      `worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 512; }
http {
  log_format cluster '$status $upstream_addr $upstream_status $request_time "$request"';
  access_log ${join(dir, 'access.log')} cluster;
  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}
  include ${join(dir, 'twin-service.conf')};
}
`,
    );
    const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'];
    const child = spawn(...dyingWithParent(NGINX, args, 'TERM'), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const proxy = new Proxy(dir, port, child);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !proxy.exitInfo) {
      if ((await probe(port)) === 200) return proxy;
      await sleep(100);
    }
    const logs = `${proxy.output}\n${proxy.errorLog()}`;
    await proxy.stop();
    throw new Error(`nginx did not answer GET /health with 200 within 15 s:\n${logs}`);
  }

  errorLog(): string {
    try {
      return readFileSync(join(this.dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Access log lines: status, upstream address(es) and status(es) as nginx logged them. */
  accessLog(): { status: number; upstreamAddr: string; upstreamStatus: string; request: string }[] {
    const file = join(this.dir, 'access.log');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const match = /^(\d+) (.*?) (\S+(?:, \S+)*(?: : \S+)*) \S+ "(.*)"$/.exec(line);
        const [, status, upstreamAddr, upstreamStatus, req] = match ?? ['', '0', '', '', line];
        return { status: Number(status), upstreamAddr, upstreamStatus, request: req };
      });
  }

  async stop(): Promise<void> {
    if (this.destroyed) return;
    if (!this.exitInfo) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.killGroup(), 5000);
      await this.exited;
      clearTimeout(timer);
    }
    this.destroySync();
  }

  private killGroup(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.killGroup();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
