import { Module } from '@nestjs/common';
import { MapPageController } from './map-page.controller.js';
import { TilesController } from './tiles.controller.js';
import { TilesRepository } from './tiles.repository.js';
import { TilesService } from './tiles.service.js';

/** Maps of the visible twins: vector tiles, their TileJSON, and the map page for people. */
@Module({ controllers: [TilesController, MapPageController], providers: [TilesRepository, TilesService] })
export class MapsModule {}
