/* global require, process */
/**
 * Preloaded into the service (`node --require`): as it exits, one full collection with V8's verbose
 * GC trace on, which prints the growing factor V8 set the heap's next limit with
 * (`[HeapController] factor 1.2 …`) to standard output.
 */
const v8 = require('node:v8');
const vm = require('node:vm');

process.on('exit', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  v8.setFlagsFromString('--trace-gc-verbose');
  gc();
});
