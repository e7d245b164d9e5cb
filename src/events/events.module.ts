import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseNotifications } from '../database/notifications.js';
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
      inject: [APP_CONFIG, DatabaseNotifications],
      useFactory: (config: AppConfig, notifications: DatabaseNotifications | null): EventBus =>
        config.eventBus === 'postgres' && notifications ? new PostgresEventBus(notifications) : new MemoryEventBus(),
    },
  ],
  exports: [EventsService],
})
export class EventsModule {}
