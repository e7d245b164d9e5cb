import { Injectable } from '@nestjs/common';
import { ImagesRepository } from './images.repository.js';

/**
 * Where image bytes live, keyed by image id. The database implementation below is the one in use;
 * an object store (S3, GCS, …) can replace it by binding another class to this token.
 * `put` receives the transaction that records the image's metadata, so a database store writes in it
 * and an external store may ignore it.
 */
export abstract class ImageStore {
  abstract put(id: string, bytes: Buffer): Promise<void>;
  abstract get(id: string): Promise<Buffer | undefined>;
}

/** Keeps the bytes in the `images.bytes` column (bytea), next to the metadata. */
@Injectable()
export class DatabaseImageStore extends ImageStore {
  constructor(private readonly images: ImagesRepository) {
    super();
  }

  put(id: string, bytes: Buffer): Promise<void> {
    return this.images.writeBytes(id, bytes);
  }

  get(id: string): Promise<Buffer | undefined> {
    return this.images.readBytes(id);
  }
}
