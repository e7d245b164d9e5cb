import { Module } from '@nestjs/common';
import { RevenueController } from './revenue.controller.js';
import { RevenueRepository } from './revenue.repository.js';
import { RevenueService } from './revenue.service.js';

@Module({
  controllers: [RevenueController],
  providers: [RevenueRepository, RevenueService],
  exports: [RevenueRepository],
})
export class RevenueModule {}
