import { Module } from '@nestjs/common';
import { OgcController } from './ogc.controller.js';
import { OgcRepository } from './ogc.repository.js';
import { OgcService } from './ogc.service.js';

/** The twins as an OGC API – Features service with CQL2 filters (`/ogc`), for GIS clients. */
@Module({ controllers: [OgcController], providers: [OgcRepository, OgcService] })
export class OgcModule {}
