import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { installPgTypeParsers } from './timestamps.js';

/**
 * Data source for the TypeORM CLI (`npm run migration:run`, `migration:check`). It needs a real
 * PostgreSQL: `DATABASE_URL` must be set. The running service migrates itself at boot, on either
 * database.
 */
installPgTypeParsers();
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error('DATABASE_URL must be set for the migration CLI (the service migrates the embedded database itself at boot).');
}
// No statement timeout: as for the service's own migrator, schema work (CREATE EXTENSION postgis) may take long.
export default new DataSource(dataSourceOptions(url, 1, 0));
