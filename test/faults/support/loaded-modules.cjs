/* global require, process */
/**
 * Preloaded into the service (`node --require`): when the process exits, writes the files of every
 * CommonJS module it loaded to LOADED_MODULES_FILE, one a line, then Node's own modules it loaded as
 * `node:internal <id>` lines (tests look for the tracing SDK, and for Node's bundled undici), then the
 * ICU services it used as `icu <name>` lines: each pages in megabytes of ICU's locale data from the node
 * binary, resident for the process's life.
 */
const { writeFileSync } = require('node:fs');

const icuUsed = new Set();
const recorded = (name, target) => new Proxy(target, { apply: (fn, self, args) => (icuUsed.add(name), Reflect.apply(fn, self, args)), construct: (fn, args, newTarget) => (icuUsed.add(name), Reflect.construct(fn, args, newTarget)) });
for (const name of ['DateTimeFormat', 'Collator', 'NumberFormat', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'Segmenter', 'DisplayNames']) Intl[name] = recorded(`Intl.${name}`, Intl[name]);
for (const [owner, names] of [
  [String.prototype, ['localeCompare', 'toLocaleLowerCase', 'toLocaleUpperCase']],
  [Date.prototype, ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']],
  [Number.prototype, ['toLocaleString']],
]) {
  for (const name of names) Object.defineProperty(owner, name, { ...Object.getOwnPropertyDescriptor(owner, name), value: recorded(name, owner[name]) });
}

process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => `node:internal ${entry.slice('NativeModule '.length)}`);
  writeFileSync(process.env.LOADED_MODULES_FILE, [...Object.keys(require.cache), ...builtins, ...[...icuUsed].map((name) => `icu ${name}`)].join('\n'));
});
