#!/usr/bin/env node
// `npm run build`: compiles the service (nest build), bundles the server's entry into one file
// (scripts/lib/bundle-service.mjs) and prepares the embedded database template.
//   --if-changed  skip the compilation when dist/ was built from exactly the current sources
//                 (npm start, npm run cli and the migration commands use it: a start with nothing
//                 changed does not rebuild)
//   --quiet       say nothing when there is nothing to do
//
// The template is an embedded PostgreSQL data directory with PostGIS and every migration applied,
// made once per set of migrations (src/database/embedded-template.ts): a new embedded database is then
// a copy of it, ready in seconds, instead of CREATE EXTENSION postgis and the migrations on first start.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleService } from './lib/bundle-service.mjs';
import supportedNode from './lib/supported-node.cjs';

supportedNode.exitOnUnsupportedNode();

const root = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');
/** What the compiled output depends on (the bundler's settings included). */
const INPUTS = ['src', 'db', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json', 'scripts/lib/bundle-service.mjs'];
const STAMP = join(root, 'dist', '.build-fingerprint');

function* filesUnder(path) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) yield* filesUnder(join(path, name));
  } else {
    yield path;
  }
}

function fingerprint() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of filesUnder(join(root, input))) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function run(command, commandArgs) {
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const started = Date.now();
const current = fingerprint();
const upToDate = existsSync(STAMP) && readFileSync(STAMP, 'utf8') === current && existsSync(join(root, 'dist', 'src', 'main.js'));
if (args.has('--if-changed') && upToDate) {
  if (!quiet) process.stderr.write('build: dist/ is up to date with the sources\n');
} else {
  run(join(root, 'node_modules', '.bin', 'nest'), ['build', '-p', 'tsconfig.build.json']);
  const bytes = await bundleService(root);
  writeFileSync(STAMP, current);
  if (!quiet) process.stderr.write(`build: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s (dist/src/main.js: one bundle of ${(bytes / 2 ** 20).toFixed(1)} MB)\n`);
}
run(process.execPath, [join(root, 'dist', 'src', 'database', 'make-embedded-template.js'), ...(quiet ? ['--quiet'] : [])]);
