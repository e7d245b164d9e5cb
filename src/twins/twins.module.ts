import { Module } from '@nestjs/common';
import { TwinsController } from './twins.controller.js';
import { TwinsRepository } from './twins.repository.js';
import { TwinsService } from './twins.service.js';

@Module({ controllers: [TwinsController], providers: [TwinsRepository, TwinsService], exports: [TwinsRepository, TwinsService] })
export class TwinsModule {}
