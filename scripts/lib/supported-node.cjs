// The npm scripts' check of the Node.js version (scripts/build.mjs, which `npm start`, `npm run cli` and the
// migration commands run first, and jest.config.js): on a Node.js older than package.json's `engines`, one
// line and exit 1, the same line as the service's own check (src/common/node-version.ts). CommonJS with
// nothing newer than Node.js 12 knows, so that an old Node prints the line instead of failing on this file.
'use strict';
const { readFileSync } = require('fs');
const { join } = require('path');

/** The major version package.json's `engines.node` (">=26.0.0") asks for. */
function requiredMajor() {
  const engines = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')).engines;
  const major = /^>=\s*(\d+)(?:\.\d+){0,2}$/.exec((engines && engines.node) || '');
  if (!major) throw new Error('package.json: engines.node must read ">=N.0.0"');
  return Number(major[1]);
}

/** The one line for an unsupported Node.js; undefined for a supported one. */
function unsupportedNode(version, executable) {
  const required = requiredMajor();
  const major = Number((/^v?(\d+)\./.exec(version) || [])[1]);
  if (major >= required) return undefined;
  return (
    `twin-service needs Node.js ${required} or newer; this is Node.js ${version.replace(/^v/, '')} (${executable}). ` +
    `In the repository, put Node.js ${required} first: export PATH="$(scripts/node-lts.sh):$PATH"`
  );
}

/** Exits with the line on an unsupported Node.js. */
function exitOnUnsupportedNode() {
  const problem = unsupportedNode(process.versions.node, process.execPath);
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

module.exports = { unsupportedNode, exitOnUnsupportedNode };
