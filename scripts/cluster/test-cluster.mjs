#!/usr/bin/env node
// `npm run test:cluster`: installs what the cluster run needs when it is missing (Debian's nginx and
// redis-server, as root through apt-get), builds if the sources changed, then runs the cluster jest
// project (test/cluster/). Extra arguments go to jest (`-- --ci --json --outputFile=…` in CI). The exit
// code is jest's: non-zero when a check fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = (file, args, options = {}) => spawnSync(file, args, { stdio: 'inherit', cwd: root, ...options }).status ?? 1;

const missing = [];
if (!existsSync(process.env.NGINX_BIN ?? '/usr/sbin/nginx')) missing.push('nginx');
if (!existsSync(process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server')) missing.push('redis-server');
if (missing.length > 0) {
  if (process.getuid?.() !== 0) {
    console.error(`test:cluster: ${missing.join(' and ')} missing; install with \`apt-get install -y ${missing.join(' ')}\` (needs root)`);
    process.exit(1);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (run('apt-get', ['update', '-qq'], { env }) !== 0 || run('apt-get', ['install', '-y', '-qq', ...missing], { env }) !== 0) {
    console.error(`test:cluster: could not install ${missing.join(' ')}`);
    process.exit(1);
  }
}

if (run(process.execPath, ['scripts/build.mjs', '--if-changed', '--quiet']) !== 0) process.exit(1);
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
process.exit(run(process.execPath, [jest, '-c', 'test/cluster/jest.config.cjs', '--runInBand', ...process.argv.slice(2)]));
