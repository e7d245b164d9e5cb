import { Module } from '@nestjs/common';
import { MapPageController } from './map-page.controller.js';
import { TileGridFold } from './tile-grid-fold.js';
import { TilesController } from './tiles.controller.js';
import { TilesRepository } from './tiles.repository.js';
import { TilesService } from './tiles.service.js';

/** Maps of the visible twins: vector tiles, their TileJSON, the map page for people, and the fold that keeps the tiles' grid compact. */
@Module({ controllers: [TilesController, MapPageController], providers: [TilesRepository, TilesService, TileGridFold] })
export class MapsModule {}
