import { existsSync, readFileSync } from 'node:fs';
import { migrations } from '../../db/migrations/index.js';
import { Database } from './database.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { cachePath, templateKey, templatePath, writeAtomically } from './embedded-template.js';

// The maker of the embedded template (embedded-template.ts says what it is), apart from its reader: it
// needs the whole database layer, which itself reads templates.

/** Makes the template unless dist/ or the cache already has it for the current key. */
export async function ensureTemplate(log: (line: string) => void = () => undefined): Promise<string> {
  const key = templateKey();
  const target = templatePath(key);
  if (existsSync(target)) return target;
  const cached = cachePath(key);
  if (existsSync(cached)) {
    writeAtomically(target, readFileSync(cached));
    log(`embedded template: ${target} (from the cache)`);
    return target;
  }
  const started = Date.now();
  const embedded = await startEmbeddedPostgres({ template: false });
  try {
    const database = await Database.open(
      { databaseUrl: embedded.url, dataDir: '', databasePoolSize: 1, databaseStatementTimeoutMs: 0 },
      { log: () => undefined } as never,
    );
    await database.close();
    const dump = await embedded.dump();
    writeAtomically(cached, dump);
    writeAtomically(target, dump);
  } finally {
    await embedded.stop();
  }
  log(`embedded template: made in ${((Date.now() - started) / 1000).toFixed(1)} s (PostGIS and ${migrations.length} migrations) → ${target}`);
  return target;
}

if (require.main === module) {
  const quiet = process.argv.includes('--quiet');
  ensureTemplate((line) => (quiet ? undefined : process.stderr.write(`${line}\n`))).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`embedded template: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
