import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onProcessExit } from './cleanup';
import { dyingWithParent } from './orphans';
import { freePort } from './pg-cluster';
import { sleep } from './service-process';

/** Debian's nginx; NGINX_BIN overrides. */
const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/**
 * A real nginx in front of the service, as in production: its own prefix folder under the system's
 * temporary folder (config, pid file, logs, body buffers), not daemonized (`daemon off`, so it is our
 * child and dies with the run), a master and one worker, listening on a free loopback port.
 *
 * The upstream keeps nginx's defaults (`max_fails=1 fail_timeout=10s`, `proxy_next_upstream error
 * timeout`): a replica that resets a connection or closes it without an answer is marked failed for
 * 10 s, and a POST is not retried on another replica (non-idempotent) but answered 502 — exactly what an
 * early-closing service does to a proxy. Keep-alive connections to the upstream, as usually configured.
 */
export class NginxProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private output = '';
  private destroyed = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-16 * 1024);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    // Last resort, where exit hooks fire (see orphans.ts for Jest): the whole process group (master and
    // workers: the master is started detached, as its own group leader), so no worker keeps the port.
    onProcessExit(() => this.destroySync());
  }

  get errorLogFile(): string {
    return join(this.dir, 'error.log');
  }

  get accessLogFile(): string {
    return join(this.dir, 'access.log');
  }

  /**
   * `site` writes the `http` block's upstream and server for the listen port (`test/cluster` passes the
   * repository's own site file, deploy/nginx/twin-service.conf); by default the one above.
   */
  static async start(upstreamPorts: number[], site: (listen: number, upstreamPorts: number[]) => string = defaultSite): Promise<NginxProcess> {
    if (!existsSync(NGINX)) {
      throw new Error(`nginx not found at ${NGINX}: install it with \`apt-get install -y nginx\` (CI does), or set NGINX_BIN`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'twin-faults-nginx-'));
    // As root the workers run as nginx's default unprivileged user: they must be able to enter the
    // prefix folder (they create the body buffer files in it; nginx chowns those folders itself).
    chmodSync(dir, 0o755);
    const port = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), config(dir, site(port, upstreamPorts)));
    // Its own process group (so a group kill takes the workers too), and SIGTERM to the master if the
    // test process dies (nginx's fast shutdown: the master stops its workers).
    const child = spawn(...dyingWithParent(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], 'TERM'), {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const nginx = new NginxProcess(dir, port, child);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (nginx.exitInfo) break;
      if ((await probe(port)) === 200) return nginx;
      await sleep(100);
    }
    const why = nginx.exitInfo ? `exited (${JSON.stringify(nginx.exitInfo)})` : 'did not answer GET /health with 200 within 15 s';
    const logs = `${nginx.output}\n${nginx.errorLog()}`;
    await nginx.stop();
    throw new Error(`nginx ${why}:\n${logs}`);
  }

  /** nginx's error log, without the routine notice that a large body was buffered to a temporary file. */
  errorLog(): string {
    try {
      return readFileSync(this.errorLogFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '' && !line.includes('buffered to a temporary file'))
        .join('\n');
    } catch {
      return '';
    }
  }

  /**
   * Access log lines: `<status> <upstream_addr> <upstream_status> <request_time> "<request>"` (the request
   * with its quotes). A request nginx passed to several replicas lists each (`a:1, b:2` and `502, 201`),
   * spaces included.
   */
  accessLog(): { status: number; upstreamAddr: string; upstreamStatus: string; requestTime: number; request: string }[] {
    if (!existsSync(this.accessLogFile)) return [];
    return readFileSync(this.accessLogFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const match = /^(\d+) (.*?) (\S+(?:, \S+)*(?: : \S+)*) (\S+) (".*")$/.exec(line);
        const [, status, upstreamAddr, upstreamStatus, requestTime, request] = match ?? ['', '0', '', '', '0', line];
        return { status: Number(status), upstreamAddr, upstreamStatus, requestTime: Number(requestTime), request };
      });
  }

  /** Fast shutdown (SIGTERM to the master stops the workers), then the group is killed if anything is left. */
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

/** The main configuration: a prefix of its own (pid, logs, body buffers), the access log format, and `site`. */
function config(dir: string, site: string): string {
  const temp = (name: string) => `${name}_temp_path ${join(dir, name.replace('_', '-'))};`;
  return `
daemon off;
master_process on;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;

events {
  worker_connections 512;
}

http {
  log_format faults '$status $upstream_addr $upstream_status $request_time "$request"';
  access_log ${join(dir, 'access.log')} faults;
  ${temp('client_body')}
  ${temp('proxy')}
  ${temp('fastcgi')}
  ${temp('uwsgi')}
  ${temp('scgi')}

${site}
}
`;
}

/** nginx's defaults, written out, in front of the replicas: one failure marks a replica down for 10 s. */
function defaultSite(listen: number, upstreamPorts: number[]): string {
  return `
  upstream twin_service {
${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 16;
  }

  server {
    listen 127.0.0.1:${listen};
    client_max_body_size 100m;

    location / {
      proxy_pass http://twin_service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
`;
}

/** GET /health through nginx: its status, or undefined when nothing answers. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', method: 'GET', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
    req.end();
  });
}
