import { Module } from '@nestjs/common';
import { ImagesModule } from '../images/images.module.js';
import { TwinsModule } from '../twins/twins.module.js';
import { MyQuestsController, QuestsController } from './quests.controller.js';
import { QuestsRepository } from './quests.repository.js';
import { QuestsService } from './quests.service.js';

@Module({
  imports: [ImagesModule, TwinsModule],
  controllers: [QuestsController, MyQuestsController],
  providers: [QuestsRepository, QuestsService],
})
export class QuestsModule {}
