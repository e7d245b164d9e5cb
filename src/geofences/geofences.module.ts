import { Module } from '@nestjs/common';
import { GeofenceIndex } from './geofence-index.js';
import { GeofencesController } from './geofences.controller.js';
import { GeofencesRepository } from './geofences.repository.js';
import { GeofencesService } from './geofences.service.js';

/**
 * Geofences: the `/geofences/` routes. Crossings are recorded by the positions' statements
 * (geofence-crossings.ts), with the insides of large batches found among the geofences an instance holds
 * (geofence-index.ts, exported for them).
 */
@Module({
  controllers: [GeofencesController],
  providers: [GeofencesRepository, GeofencesService, GeofenceIndex],
  exports: [GeofenceIndex],
})
export class GeofencesModule {}
