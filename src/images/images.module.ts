import { Module } from '@nestjs/common';
import { ImageLinks } from './image-links.js';
import { DatabaseImageStore, ImageStore } from './image-store.js';
import { ImagesController } from './images.controller.js';
import { ImagesRepository } from './images.repository.js';
import { ImagesService } from './images.service.js';

@Module({
  controllers: [ImagesController],
  providers: [ImagesRepository, ImagesService, ImageLinks, { provide: ImageStore, useClass: DatabaseImageStore }],
  exports: [ImagesRepository, ImageLinks],
})
export class ImagesModule {}
