import { Global, Module } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { serviceKey } from '../../database/service-keys.js';
import { Sql } from '../../database/sql.js';
import { CursorCodec } from './cursor.js';

/** What every feature's JSON:API lists share: the codec of page cursors, keyed by CURSOR_SECRET or the database's cursor key. */
@Global()
@Module({
  providers: [
    {
      provide: CursorCodec,
      inject: [APP_CONFIG, Sql],
      useFactory: async (config: AppConfig, sql: Sql) =>
        new CursorCodec(config.cursorSecret ? createHash('sha256').update(config.cursorSecret).digest() : await serviceKey(sql, 'cursor')),
    },
  ],
  exports: [CursorCodec],
})
export class JsonApiModule {}
