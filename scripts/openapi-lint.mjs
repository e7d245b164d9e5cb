#!/usr/bin/env node
// `npm run openapi:lint`: writes the service's OpenAPI document (as GET /docs-json serves it; see
// scripts/openapi-document.mjs) to tmp/openapi.json and lints it with Redocly (redocly.yaml: the
// recommended rules) and Spectral (.spectral.yaml: spectral:oas). Exits 1 when either reports an
// error; warnings are printed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot, requireFromRoot } from './lib/load-typescript.mjs';
import { openApiDocument } from './openapi-document.mjs';

const started = Date.now();
const file = join(projectRoot, 'tmp', 'openapi.json');
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
process.stdout.write(`openapi-lint: the document is in ${file}\n`);

/** Runs a package's command-line tool with this Node.js. */
function run(name, pkg, bin, args) {
  const packageJson = requireFromRoot.resolve(`${pkg}/package.json`);
  const binPath = join(dirname(packageJson), bin);
  process.stdout.write(`\nopenapi-lint: ${name}\n`);
  const result = spawnSync(process.execPath, [binPath, ...args], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return result.status ?? 1;
}

const failures = [];
if (run('Redocly (recommended)', '@redocly/cli', 'bin/cli.js', ['lint', '--config', 'redocly.yaml', '--format', 'stylish', file]) !== 0) failures.push('Redocly');
if (run('Spectral (spectral:oas)', '@stoplight/spectral-cli', 'dist/index.js', ['lint', '--ruleset', '.spectral.yaml', '--fail-severity', 'error', file]) !== 0) failures.push('Spectral');

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (failures.length > 0) {
  process.stdout.write(`\nopenapi-lint: ${failures.join(' and ')} found errors in the OpenAPI document (${seconds} s); fix the decorators or src/**/*.openapi.ts\n`);
  process.exit(1);
}
process.stdout.write(`\nopenapi-lint: no errors (${seconds} s)\n`);
