// The server's entry, `dist/src/main.js`, as one file: the compiled service and the packages it runs,
// bundled by esbuild (whitespace and syntax minified, identifiers as written). Loaded as ~1,600 modules,
// the process held ~19 MB of their sources and module records on its heap for its whole life; from one
// bundle of ~6 MB its heap at rest is 27 MB instead of 43 (docs/PERFORMANCE.md, Memory). The CLI and
// the migration commands keep the compiled modules of dist/ as they are.
//
// Left outside the bundle, loaded from node_modules as before:
// - what the service loads only when a setting asks for it (PGlite and its extensions, OpenTelemetry,
//   ioredis, undici): its source would sit on the heap of every server that never uses it;
// - pg, so that OpenTelemetry's pg instrumentation can patch it as it loads;
// - swagger-ui-dist (files served from its folder) and packages Nest or Fastify name for features
//   the service does not use (microservices, websockets, Express, views, multipart).
// Left out altogether: TypeORM's drivers of other databases, class-validator's phone numbers.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const EXTERNAL = [
  '@electric-sql/*',
  '@opentelemetry/*',
  'ioredis',
  'undici',
  'pg',
  'pg-native',
  'swagger-ui-dist',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets/*',
  '@nestjs/platform-express',
  '@fastify/multipart',
  '@fastify/view',
];

/**
 * `__dirname` as each compiled module of dist/ saw it (its own folder), not the bundle's: the map page's
 * files and the embedded database's template are found next to the modules that name them.
 */
const ownDirname = (dist, bundleDir) => ({
  name: 'own-dirname',
  setup(builder) {
    builder.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(`${dist}/`)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('__dirname')) return undefined;
      const folder = JSON.stringify(relative(bundleDir, dirname(args.path)));
      return { contents: text.replaceAll('__dirname', `require('node:path').join(__dirname, ${folder})`), loader: 'js' };
    });
  },
});

/**
 * A package file rewritten as it enters the bundle. `rewrite(text)` returns the new source, or undefined
 * when the file is no longer written the way it expects: then the build fails, naming the file and `name`,
 * so an upgrade of the package is reviewed rather than bundled unpatched.
 */
const rewritten = (name, filter, rewrite) => ({
  name,
  setup(builder) {
    builder.onLoad({ filter }, async (args) => {
      const contents = rewrite(await readFile(args.path, 'utf8'));
      if (contents === undefined) throw new Error(`${args.path} is no longer written as ${name} expects: review it (scripts/lib/bundle-service.mjs)`);
      return { contents, loader: 'js' };
    });
  },
});

/**
 * @fastify/compress asks of every answer `payload instanceof Response`; reading the global `Response`
 * loads Node's bundled undici (0.8 MB of source, ~2.5 MB on the heap and off it, for good), which
 * nothing here uses. Fastify's own reply tells a fetch Response by its tag, as this does.
 */
const FETCH_RESPONSE_CHECK = 'return obj instanceof Response';
const fetchResponseByTag = rewritten('fetch-response-by-tag', /[\\/]@fastify[\\/]compress[\\/]lib[\\/]utils\.js$/, (text) =>
  text.includes(FETCH_RESPONSE_CHECK) ? text.replace(FETCH_RESPONSE_CHECK, "return Object.prototype.toString.call(obj) === '[object Response]'") : undefined,
);

/*
 * Code the service never runs, left out: a bundled module that something requires is evaluated at start
 * and held for the process's life (its source, classes, closures; these two, ~2.5 MB of RSS at rest, and
 * the heap's limits under load follow what is live).
 */

/**
 * TypeORM's DriverFactory requires the driver and query runner of every database TypeORM knows; the
 * service speaks PostgreSQL only. Another driver's name now fails when the DataSource is made.
 */
const DRIVER_REQUIRE = /require\("\.\/([a-z0-9-]+)\/(\w+Driver)"\)/g;
const postgresDriverOnly = rewritten('postgres-driver-only', /[\\/]typeorm[\\/]driver[\\/]DriverFactory\.js$/, (text) => {
  let leftOut = 0;
  const contents = text.replace(DRIVER_REQUIRE, (call, folder, name) => {
    if (folder === 'postgres') return call;
    leftOut++;
    return `({ get ${name}() { throw new Error('TypeORM\\'s ${name} is left out of the service\\'s bundle (PostgreSQL only): scripts/lib/bundle-service.mjs'); } })`;
  });
  return text.includes('require("./postgres/PostgresDriver")') && leftOut >= 10 ? contents : undefined;
});

/**
 * class-validator's IsPhoneNumber requires libphonenumber-js and its metadata; no DTO uses it. Applying it
 * now fails where the decorator is applied, at start, rather than as a validator that refuses everything.
 */
const PHONE_EXPORTS = 'exports.IsPhoneNumber = exports.isPhoneNumber = exports.IS_PHONE_NUMBER = void 0;';
const noPhoneNumbers = rewritten('no-phone-numbers', /[\\/]class-validator[\\/]cjs[\\/]decorator[\\/]string[\\/]IsPhoneNumber\.js$/, (text) =>
  text.includes(PHONE_EXPORTS)
    ? `"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
const leftOut = () => { throw new Error("class-validator's IsPhoneNumber is left out of the service's bundle (libphonenumber-js): scripts/lib/bundle-service.mjs"); };
exports.IS_PHONE_NUMBER = 'isPhoneNumber';
exports.isPhoneNumber = leftOut;
exports.IsPhoneNumber = leftOut;
`
    : undefined,
);

/**
 * Nest's two loggers each make a date formatter as their module loads, for timestamps of console lines
 * the service never writes (its logger is pino). Making one pages in ~5 MB of ICU's locale data from
 * the node binary, resident for good: each is now made on its first use.
 */
const FORMATTER_AT_LOAD = 'const dateTimeFormatter = new Intl.DateTimeFormat(undefined, {';
const dateFormatterOnFirstUse = rewritten('date-formatter-on-first-use', /[\\/]@nestjs[\\/]common[\\/]services[\\/](?:console-)?logger\.service\.js$/, (text) =>
  text.includes(FORMATTER_AT_LOAD)
    ? text.replace(
        FORMATTER_AT_LOAD,
        'const dateTimeFormatter = ((options) => { let made; return { format: (date) => (made ??= new Intl.DateTimeFormat(undefined, options)).format(date) }; })({',
      )
    : undefined,
);

/** Bundles `dist/src/main.js` (as compiled) into itself; returns the bundle's size in bytes. */
export async function bundleService(root) {
  const dist = join(root, 'dist');
  const entry = join(dist, 'src', 'main.js');
  const result = await build({
    entryPoints: [entry],
    outfile: entry,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node26',
    // Identifiers are not renamed, so stack traces and logs keep the code's names; the few top-level
    // names of ES modules that collide once hoisted into one scope are suffixed (js-yaml's `Schema2`).
    // keepNames would keep those too, but by a call per function created, closures of every request
    // included: +15-20 % of the service's CPU per cheap request (bench/cpu-per-request.mjs).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    charset: 'ascii',
    external: EXTERNAL,
    // The packages published as ES modules read import.meta.url (to createRequire from it): in one
    // CommonJS file, it is the bundle's own URL.
    banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__bundleUrl' },
    plugins: [ownDirname(dist, dirname(entry)), fetchResponseByTag, postgresDriverOnly, noPhoneNumbers, dateFormatterOnFirstUse],
    // Linked, not loaded: `node --enable-source-maps` shows the compiled modules' lines in stack traces.
    sourcemap: 'linked',
    write: false,
    logLevel: 'error',
  });
  for (const file of result.outputFiles) {
    // charset 'ascii' leaves regular expression literals as written; escaped, the whole source is
    // ASCII, which V8 keeps at one byte a character (one character outside Latin-1 doubles it).
    const text = file.path.endsWith('.map') ? file.text : file.text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    await writeFile(file.path, text);
  }
  return result.outputFiles.find((file) => file.path === entry).contents.length;
}
