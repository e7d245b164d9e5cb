/* global require, process */
/**
 * Preloaded into the service (`node --require`): when the process exits, writes the files of every
 * CommonJS module it loaded to LOADED_MODULES_FILE, one a line (the tracing test looks for the SDK).
 */
const { writeFileSync } = require('node:fs');
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\n')));
