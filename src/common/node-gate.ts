import { unsupportedNode } from './node-version.js';

// The first import of the service's and the CLI's entry points: on an unsupported Node.js they stop here,
// with one line (node-version.ts), before loading a module that might fail on it in a way that does not say why.
const problem = unsupportedNode(process.versions.node, process.execPath);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
