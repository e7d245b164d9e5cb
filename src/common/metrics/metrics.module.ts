import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';

/** `Metrics` for every module to register its series on; the server that exposes them. */
@Global()
@Module({ providers: [{ provide: Metrics, useFactory: () => new Metrics() }, MetricsServer], exports: [Metrics, MetricsServer] })
export class MetricsModule {}
