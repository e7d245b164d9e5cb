import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onProcessExit } from '../../faults/support/cleanup';
import { freePort, type PgCluster } from '../../faults/support/pg-cluster';

/**
 * A hot standby of `primary`: `pg_basebackup -R -X stream` into a temporary folder (the primary's
 * initdb trusts replication connections from 127.0.0.1), then `pg_ctl start` on a free port. Runs as
 * the `postgres` user when the test runs as root, like the primary. `destroy()` stops and removes it.
 */
export class StreamingReplica {
  private destroyed = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly asUser: string | undefined,
  ) {
    onProcessExit(() => this.destroySync());
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  url(database: string): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async create(primary: PgCluster): Promise<StreamingReplica> {
    const asUser = process.getuid?.() === 0 ? 'postgres' : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'twin-cluster-replica-'));
    if (asUser) chownSync(dir, Number(execFileSync('id', ['-u', asUser], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', asUser], { encoding: 'utf8' })));
    const replica = new StreamingReplica(dir, await freePort(primary.port + 100), primary.bin, asUser);
    try {
      await replica.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', replica.dataDir, '-R', '-X', 'stream', '--no-sync', '-c', 'fast']);
      await replica.run('bash', ['-c', `mkdir -p '${join(dir, 'sock')}'`]);
      // max_connections must be at least the primary's (PgCluster starts it with 50).
      const options = `-p ${replica.port} -k ${join(dir, 'sock')} -c listen_addresses=127.0.0.1 -c max_connections=50 -c shared_buffers=32MB`;
      await replica.run('pg_ctl', ['-D', replica.dataDir, '-o', options, '-l', join(dir, 'postgres.log'), '-w', '-t', '60', 'start']);
    } catch (error) {
      await replica.destroy();
      throw error;
    }
    return replica;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) await this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    this.destroySync();
  }

  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      if (existsSync(join(this.dataDir, 'postmaster.pid'))) execFileSync(...this.command('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore', timeout: 10_000 });
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
        if (error) reject(new Error(`${tool} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  }
}
