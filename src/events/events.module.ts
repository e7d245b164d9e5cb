import { Module, type OnModuleInit } from '@nestjs/common';
import { Metrics } from '../common/metrics/metrics.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseNotifications } from '../database/notifications.js';
import { Sql } from '../database/sql.js';
import { EventBus, MemoryEventBus, PostgresEventBus } from './event-bus.js';
import { EventRetention } from './event-retention.js';
import { EventStreams } from './event-streams.js';
import { EventsController } from './events.controller.js';
import { EventsRepository } from './events.repository.js';
import { EventsService } from './events.service.js';
import { IdempotencyModule } from '../common/idempotency/idempotency.module.js';

/** Timeline events: the `/events/` routes, the live stream and the retention of old events. */
@Module({
  imports: [IdempotencyModule],
  controllers: [EventsController],
  providers: [
    EventsRepository,
    EventsService,
    EventStreams,
    EventRetention,
    {
      provide: EventBus,
      inject: [APP_CONFIG, DatabaseNotifications, Sql],
      useFactory: (config: AppConfig, notifications: DatabaseNotifications | null, sql: Sql): EventBus =>
        config.eventBus === 'postgres' && notifications ? new PostgresEventBus(notifications, sql) : new MemoryEventBus(),
    },
  ],
  exports: [EventsService, EventBus],
})
export class EventsModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly streams: EventStreams,
  ) {}

  onModuleInit(): void {
    const streams = this.streams;
    this.metrics.gauge({
      name: 'event_streams_open',
      help: 'Open GET /events/stream connections on this instance.',
      collect() {
        this.set(streams.size);
      },
    });
  }
}
