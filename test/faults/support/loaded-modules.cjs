/* global require, process */
/**
 * Preloaded into the service (`node --require`): when the process exits, writes the files of every
 * CommonJS module it loaded to LOADED_MODULES_FILE, one a line, then Node's own modules it loaded as
 * `node:internal <id>` lines (tests look for the tracing SDK, and for Node's bundled undici).
 */
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => `node:internal ${entry.slice('NativeModule '.length)}`);
  writeFileSync(process.env.LOADED_MODULES_FILE, [...Object.keys(require.cache), ...builtins].join('\n'));
});
