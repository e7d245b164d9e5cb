import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrations } from '../../db/migrations/index.js';

/**
 * A new embedded database used to cost CREATE EXTENSION postgis (6–12 s in PGlite) and every migration
 * on its first start. The template is that work done once: a PGlite data directory with PostGIS and
 * all migrations applied, dumped as a tarball. A new embedded database (the service's DATA_DIR, or the
 * tests' in-memory one) loads it instead, in a few seconds, and the migrations then find nothing to do.
 *
 * It is made by `npm run build` (scripts/build.mjs, through make-embedded-template.ts) into dist/, so the production image carries it,
 * and kept in node_modules/.cache between builds: it is remade only when the migrations or the PGlite
 * packages change (the key below).
 */

/** PGlite packages whose versions shape the data directory. */
const PGLITE_PACKAGES = ['@electric-sql/pglite', '@electric-sql/pglite-postgis'];

function packageVersion(name: string): string {
  // Their package.json is not exported; find it from the resolved entry point.
  const entry = require.resolve(name);
  const marker = `${join('node_modules', name)}/`;
  const root = entry.slice(0, entry.lastIndexOf(marker) + marker.length);
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Changes when a migration is added or renamed, or PGlite/PostGIS move. */
export function templateKey(): string {
  const inputs = { migrations: migrations.map((migration) => migration.name), packages: PGLITE_PACKAGES.map((name) => `${name}@${packageVersion(name)}`) };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/** Where the build puts the template: beside the compiled code, so an image or a copy of dist/ has it. */
export const templatePath = (key = templateKey()): string => join(__dirname, '..', '..', 'embedded', `template-${key}.tar.gz`);

/** Between builds (nest build empties dist/): node_modules/.cache, found from the PGlite package. */
export function cachePath(key: string): string {
  const entry = require.resolve('@electric-sql/pglite');
  const nodeModules = entry.slice(0, entry.lastIndexOf('node_modules') + 'node_modules'.length);
  return join(nodeModules, '.cache', 'twin-service', `embedded-template-${key}.tar.gz`);
}

/**
 * The template's bytes when a build made one for the current migrations (in dist/, or in the cache
 * for code run from the sources, as the tests are); undefined otherwise: the database is then made
 * the slow way.
 */
export function readTemplate(): Buffer | undefined {
  try {
    const key = templateKey();
    const path = [templatePath(key), cachePath(key)].find((candidate) => existsSync(candidate));
    return path ? readFileSync(path) : undefined;
  } catch {
    return undefined;
  }
}

export function writeAtomically(path: string, bytes: Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, path);
}
