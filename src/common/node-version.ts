/**
 * The Node.js the service is built and tested on: 26 or newer (package.json `engines`, `.nvmrc`, the
 * Dockerfile's image; test/unit/node-version.spec.ts keeps them together). An older one does not run it
 * "anyway" with surprises later: the service and the CLI stop before loading anything, with one line that
 * names the Node that ran and how to put the right one first. scripts/lib/supported-node.cjs says the same
 * for the npm scripts (build, start, tests) and `.npmrc` (`engine-strict`) for `npm ci`.
 */
export const REQUIRED_NODE_MAJOR = 26;

/** The one line for a Node.js older than REQUIRED_NODE_MAJOR; undefined for a supported one. */
export function unsupportedNode(version: string, executable: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= REQUIRED_NODE_MAJOR) return undefined;
  return (
    `twin-service needs Node.js ${REQUIRED_NODE_MAJOR} or newer; this is Node.js ${version.replace(/^v/, '')} (${executable}). ` +
    `In the repository, put Node.js ${REQUIRED_NODE_MAJOR} first: export PATH="$(scripts/node-lts.sh):$PATH"`
  );
}
