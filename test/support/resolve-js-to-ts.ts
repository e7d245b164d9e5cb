/**
 * jest's globalSetup is required outside the test sandbox, where moduleNameMapper does not apply;
 * the sources import siblings as `./x.js` (NodeNext style). Resolve those to the `.ts` files.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require('node:module') as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request: string, ...rest: unknown[]) {
  try {
    return resolve.call(this, request, ...rest);
  } catch (error) {
    if (request.startsWith('.') && request.endsWith('.js')) return resolve.call(this, request.slice(0, -3), ...rest);
    throw error;
  }
};
export {};
