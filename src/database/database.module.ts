import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ChangeLog } from './change-log.js';
import { Database } from './database.js';
import { DatabaseNotifications } from './notifications.js';
import { ReadReplicas } from './read-replicas.js';
import { Sql } from './sql.js';

@Global()
@Module({
  providers: [
    { provide: Database, inject: [APP_CONFIG], useFactory: (config: AppConfig) => Database.open(config) },
    { provide: DataSource, inject: [Database], useFactory: (database: Database) => database.dataSource },
    // null without DATABASE_REPLICA_URLS: Sql then reads everything from the primary.
    { provide: ReadReplicas, inject: [Database], useFactory: (database: Database) => database.replicas ?? null },
    Sql,
    ChangeLog,
    {
      // null with the embedded database: one process owns it, and a second (listening) connection to PGlite is not safe.
      provide: DatabaseNotifications,
      inject: [APP_CONFIG, Database],
      useFactory: (config: AppConfig, database: Database) =>
        !database.sharedSession && config.databaseUrl ? new DatabaseNotifications(config.databaseUrl) : null,
    },
  ],
  exports: [Database, DataSource, Sql, ChangeLog, DatabaseNotifications],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(DatabaseNotifications) private readonly notifications: DatabaseNotifications | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.notifications?.close();
    await this.database.close();
  }
}
