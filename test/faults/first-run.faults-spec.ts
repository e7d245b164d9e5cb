import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportFigures } from './support/figures';
import { freePort } from './support/pg-cluster';
import { distDir, ServiceProcess } from './support/service-process';

/**
 * A newcomer's first run, on the built service and CLI: a new embedded database starts in seconds (from
 * the build's template), prints a demo tenant with a curl line for the real port, and the CLI works
 * while the server holds the database (its commands run inside the server), with --help everywhere and
 * one-line failures.
 */

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `node [nodeArgs] <script> args` of the build, its exit code and output. */
function run(script: string, args: string[], dataDir: string, nodeArgs: string[] = []): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, join(distDir(), 'src', ...script.split('/')), ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'error' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const cli = (dataDir: string, args: string[]) => run('cli/main.js', args, dataDir);

describe('first run on the embedded database (built service and CLI)', () => {
  let dataDir: string;
  let service: ServiceProcess | undefined;
  let port: number;
  let firstStartMs: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'twin-first-run-'));
    port = await freePort();
    const started = Date.now();
    service = await ServiceProcess.start({ port, databaseUrl: '', env: { DATA_DIR: dataDir, LOG_LEVEL: 'info' } });
    firstStartMs = Date.now() - started;
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a new embedded database is ready in seconds and prints a demo tenant with the real port', async () => {
    // Cold start used to be CREATE EXTENSION postgis plus every migration: 10 s quiet, 48 s on a busy machine.
    expect(firstStartMs).toBeLessThan(20_000);
    // The demo tenant is made once the server listens: wait for its printout.
    for (let waited = 0; !service!.logs.includes('More: npm run cli -- --help') && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    const printed = service!.logs;
    const token = /token {9}(tw_[A-Za-z0-9_-]+)/.exec(printed)?.[1];
    const organization = /organization {2}([0-9a-f-]{36})/.exec(printed)?.[1];
    expect(token).toBeDefined();
    // HOST is 127.0.0.1 here; a wildcard listen address is printed as localhost.
    expect(printed).toContain(`http://127.0.0.1:${port}/docs`);
    expect(printed).toContain(`http://127.0.0.1:${port}/twins/`);
    const answer = await fetch(`http://127.0.0.1:${port}/twins/`, { headers: { authorization: `Token ${token}`, 'x-organization': organization! } });
    expect(answer.status).toBe(200);
    reportFigures('first run (embedded)', { 'new embedded database to first 200 from /health ms': firstStartMs });
  });

  it('the first start at info fits one screen: the database, the address, the demo tenant; no route or module lines', () => {
    const printed = service!.logs.slice(0, service!.logs.indexOf('More: npm run cli -- --help'));
    const lines = printed.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(printed).not.toMatch(/RouterExplorer|RoutesResolver|InstanceLoader|NestFactory|NestApplication/);
    expect(printed).toMatch(/"context":"Database","msg":"database: embedded PGlite/);
    expect(printed).toMatch(/"context":"Boot","msg":"listening on http:\/\/127\.0\.0\.1:\d+ \(ready in \d+ ms\); API docs at/);
    expect(printed).toContain('A new embedded database in');
  });

  it('an unsupported Node.js: the service and the CLI stop with one line that names it and the way to Node.js 26', async () => {
    // Node.js 24 as far as the process can tell (the checks read process.versions.node).
    const older = join(dataDir, 'node-24.cjs');
    writeFileSync(older, "Object.defineProperty(process.versions, 'node', { value: '24.11.0' });\n");
    const empty = mkdtempSync(join(tmpdir(), 'twin-old-node-'));
    try {
      for (const [script, args] of [['main.js', []], ['cli/main.js', ['--help']]] as const) {
        const result = await run(script, [...args], empty, ['--require', older]);
        expect(result).toEqual({
          code: 1,
          stdout: '',
          stderr: `twin-service needs Node.js 26 or newer; this is Node.js 24.11.0 (${process.execPath}). In the repository, put Node.js 26 first: export PATH="$(scripts/node-lts.sh):$PATH"\n`,
        });
      }
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('the CLI works while the server holds the database: its commands run inside the server', async () => {
    const started = Date.now();
    const result = await cli(dataDir, ['bootstrap', '--json', '--organization', 'Second org']);
    expect(result).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    const created = JSON.parse(result.stdout) as { token: string; organizationId: string };
    const answer = await fetch(`http://127.0.0.1:${port}/organizations/`, { headers: { authorization: `Token ${created.token}`, 'x-organization': created.organizationId } });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: { attributes: { name: string } }[] }).data[0].attributes.name).toBe('Second org');
    reportFigures('first run: CLI through the server', { 'bootstrap through the running server ms': Date.now() - started });
  });

  it('--help for the tool and for every command, with examples', async () => {
    const tool = await cli(dataDir, ['--help']);
    expect(tool.code).toBe(0);
    const names = [...tool.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((match) => match[1]);
    expect(names).toEqual(expect.arrayContaining(['bootstrap', 'create-organization', 'create-account', 'create-token', 'revoke-token', 'generate-places', 'import-places']));
    for (const name of names) {
      const help = await cli(dataDir, [name, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`usage: npm run cli -- ${name}`);
      expect(help.stdout).toMatch(/examples:\n {2}npm run cli -- /);
    }
  });

  it.each([
    ['an unknown command', 2, ['frobnicate'], /^error: unknown command "frobnicate"/],
    ['an unknown option', 2, ['create-organization', '--nmae', 'x'], /^error: .*--nmae.*\(npm run cli -- create-organization --help\)$/],
    ['a missing option', 2, ['create-organization'], /^error: --name is required/],
    ['a malformed id', 2, ['create-token', '--account', 'nope'], /^error: --account takes an account id/],
    ['an id that does not exist', 1, ['revoke-token', '--token-id', '00000000-0000-4000-8000-000000000000'], /^error: /],
    ['a file that cannot be read', 2, ['import-places', '--organization', '00000000-0000-4000-8000-000000000000', '/nonexistent.geojson'], /^error: cannot read/],
    ['an organization id that is not a UUID', 2, ['import-places', '--organization', 'acme', 'places.geojson'], /^error: --organization takes an organization id \(a UUID\), got "acme"/],
    ['an organization that does not exist', 1, ['import-places', '--organization', '00000000-0000-4000-8000-000000000000', 'PLACES'], /^error: organization 00000000-0000-4000-8000-000000000000 does not exist$/],
  ])('%s: one line on stderr, exit code %d', async (_what, code, args, message) => {
    const places = join(dataDir, 'places.geojson');
    writeFileSync(places, JSON.stringify({ type: 'FeatureCollection', features: [] }));
    const result = await cli(dataDir, (args as string[]).map((arg) => (arg === 'PLACES' ? places : arg)));
    expect(result.code).toBe(code);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr.trim()).toMatch(message as RegExp);
  });
});
