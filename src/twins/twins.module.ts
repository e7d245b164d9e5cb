import { Module } from '@nestjs/common';
import { TwinsRepository } from './twins.repository.js';

@Module({ providers: [TwinsRepository], exports: [TwinsRepository] })
export class TwinsModule {}
