import { transformFileSync } from '@swc/core';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * dropUnusedHttpExports runs in a Node.js of its own (it changes the process's `node:http`): the module as
 * compiled for the service, then an ES module import of `node:http` as @nestjs/core does. What that
 * import loaded is read from process.moduleLoadList.
 */
function importHttpAfter(drop: boolean): { undiciLoaded: boolean; webSocket: string; globalWebSocket: string } {
  const dir = mkdtempSync(join(tmpdir(), 'node-http-exports-'));
  try {
    const compiled = transformFileSync(join(__dirname, '../../src/common/http/node-http-exports.ts'), {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    }).code;
    writeFileSync(join(dir, 'node-http-exports.cjs'), compiled);
    const script = `
      ${drop ? "require('./node-http-exports.cjs').dropUnusedHttpExports();" : ''}
      import('node:http').then((http) => {
        const undiciLoaded = process.moduleLoadList.some((name) => name.includes('undici'));
        console.log(JSON.stringify({ undiciLoaded, webSocket: typeof http.WebSocket, globalWebSocket: typeof globalThis.WebSocket }));
      });`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' })) as { undiciLoaded: boolean; webSocket: string; globalWebSocket: string };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('dropUnusedHttpExports', () => {
  it("keeps an ES module import of node:http from loading Node's bundled undici", () => {
    // Without it, the import does load undici: what makes the test able to fail.
    expect(importHttpAfter(false)).toEqual({ undiciLoaded: true, webSocket: 'function', globalWebSocket: 'function' });
    // The global WebSocket is still there (reading it loads undici then, on first use).
    expect(importHttpAfter(true)).toEqual({ undiciLoaded: false, webSocket: 'undefined', globalWebSocket: 'function' });
  });
});
