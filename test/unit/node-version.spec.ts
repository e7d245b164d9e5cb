import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REQUIRED_NODE_MAJOR, unsupportedNode } from '../../src/common/node-version';

// The npm scripts' check (plain CommonJS, so an old Node can run it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const scripts = require('../../scripts/lib/supported-node.cjs') as { unsupportedNode: (version: string, executable: string) => string | undefined };

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the supported Node.js', () => {
  it('is one version everywhere: package.json engines, .nvmrc, the Docker image and the checks', () => {
    expect((JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node).toBe(`>=${REQUIRED_NODE_MAJOR}.0.0`);
    expect(read('.nvmrc').trim()).toMatch(new RegExp(`^${REQUIRED_NODE_MAJOR}\\.\\d+\\.\\d+$`));
    const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((match) => Number(match[1]));
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([REQUIRED_NODE_MAJOR]));
    expect(read('.npmrc')).toMatch(/^engine-strict=true$/m);
  });

  it.each(['20.20.2', 'v20.20.2', '24.11.0', '25.9.0', '18.0.0'])('refuses Node.js %s with one line naming it and the way to the right one', (version) => {
    const line = unsupportedNode(version, '/usr/bin/node');
    expect(line).toBe(
      `twin-service needs Node.js ${REQUIRED_NODE_MAJOR} or newer; this is Node.js ${version.replace(/^v/, '')} (/usr/bin/node). ` +
        `In the repository, put Node.js ${REQUIRED_NODE_MAJOR} first: export PATH="$(scripts/node-lts.sh):$PATH"`,
    );
    expect(line).not.toContain('\n');
    // The npm scripts say exactly the same.
    expect(scripts.unsupportedNode(version, '/usr/bin/node')).toBe(line);
  });

  it.each([`${REQUIRED_NODE_MAJOR}.0.0`, `${REQUIRED_NODE_MAJOR}.10.0`, `v${REQUIRED_NODE_MAJOR + 1}.1.0`, process.versions.node])('runs on Node.js %s', (version) => {
    expect(unsupportedNode(version, '/usr/bin/node')).toBeUndefined();
    expect(scripts.unsupportedNode(version, '/usr/bin/node')).toBeUndefined();
  });
});
