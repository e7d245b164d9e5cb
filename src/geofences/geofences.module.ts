import { Module } from '@nestjs/common';
import { GeofencesController } from './geofences.controller.js';
import { GeofencesRepository } from './geofences.repository.js';
import { GeofencesService } from './geofences.service.js';

/** Geofences: the `/geofences/` routes. Crossings are recorded by the positions' statements (geofence-crossings.ts). */
@Module({
  controllers: [GeofencesController],
  providers: [GeofencesRepository, GeofencesService],
})
export class GeofencesModule {}
