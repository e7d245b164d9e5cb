import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { GeofencesModule } from '../geofences/geofences.module.js';
import { PositionPartitions } from './positions/position-partitions.js';
import { PositionsController } from './positions/positions.controller.js';
import { PositionsRepository } from './positions/positions.repository.js';
import { PositionsService } from './positions/positions.service.js';
import { TwinsController } from './twins.controller.js';
import { TwinsRepository } from './twins.repository.js';
import { TwinsService } from './twins.service.js';

/**
 * Twins, and where they were (`positions/`): a move is a change of the twin's event stream, so the module
 * takes the events feature's bus, and may cross geofences, found among those the geofences feature holds.
 */
@Module({
  imports: [EventsModule, GeofencesModule],
  controllers: [TwinsController, PositionsController],
  providers: [TwinsRepository, TwinsService, PositionsRepository, PositionsService, PositionPartitions],
  exports: [TwinsRepository, TwinsService, PositionsService],
})
export class TwinsModule {}
