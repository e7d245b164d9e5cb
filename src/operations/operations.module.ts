import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { TwinsModule } from '../twins/twins.module.js';
import { IdempotencyModule } from '../common/idempotency/idempotency.module.js';
import { OperationsController } from './operations.controller.js';
import { OperationsService } from './operations.service.js';

/** `POST /operations`: batches of event and twin changes, applied by the events and twins services in one transaction. */
@Module({ imports: [EventsModule, TwinsModule, IdempotencyModule], controllers: [OperationsController], providers: [OperationsService] })
export class OperationsModule {}
