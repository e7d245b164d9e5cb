import { loadConfig } from '../../config/app-config.js';
import { Database, migrate } from '../../database/database.js';
import { embeddedHolder } from '../../database/embedded-postgres.js';
import type { CliCommand } from '../cli-command.js';

/**
 * `npm run migrate`: the migrations alone, for a deploy step that runs before the new replicas start
 * (they would apply them at boot too, under the same advisory lock, so running both is safe).
 */
export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'Apply pending database migrations (under the migration lock that replicas starting together also take) and exit',
  usage: 'migrate',
  options: {},
  examples: ['migrate'],
  // Not the application context: that would open the pools and the listeners a migration does not need.
  needsDatabase: false,
  async run(context) {
    const config = loadConfig();
    const log = { log: (line: string) => context.warn(line) };
    if (config.databaseUrl) {
      const applied = await migrate(config.databaseUrl, log);
      context.out(applied === 0 ? 'migrations: nothing to apply' : `migrations: applied ${applied}`);
      return;
    }
    const holder = embeddedHolder(config.dataDir);
    if (holder !== undefined) {
      // The server holding it migrated it when it started.
      context.out(`migrations: the embedded database in ${config.dataDir} is held by process ${holder}, which applied them at its start`);
      return;
    }
    // The embedded database is migrated when it is opened.
    const database = await Database.open(config, log as never);
    await database.close();
    context.out(`migrations: the embedded database in ${config.dataDir} is up to date`);
  },
};
