import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';
import { DatabaseMetrics } from './database-metrics.js';

/** `Metrics` for every module to register its series on (the database's: DatabaseMetrics); the server that exposes them. */
@Global()
@Module({ providers: [{ provide: Metrics, useFactory: () => new Metrics() }, MetricsServer, DatabaseMetrics], exports: [Metrics, MetricsServer] })
export class MetricsModule {}
