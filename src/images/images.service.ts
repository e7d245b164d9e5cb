import { createHash } from 'node:crypto';
import { sparseResource, type Fieldsets } from '../common/json-api/representation.js';
import { Sql } from '../database/sql.js';
import { Injectable } from '@nestjs/common';
import { ApiError, notFound } from '../common/json-api/api-error.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import type { Tenant } from '../common/auth/tenant.js';
import { ImageFormatError, isImageContentType, readImageDimensions, sniffImageType } from './image-format.js';
import type { ImageUrl } from './image-links.js';
import { imageResource } from './image.resource.js';
import { ImageStore } from './image-store.js';
import { ImagesRepository } from './images.repository.js';

/**
 * An image's bytes as a value: its type and entity tag come with the metadata, the bytes are read
 * only when asked for, so that a client whose copy is current costs no read of them.
 */
export interface ImageContent {
  contentType: string;
  /** Strong entity tag (the SHA-256 of the bytes, quoted): an image never changes. */
  etag: string;
  read(): Promise<Buffer>;
}

/** Bytes that are not an image of the declared format: a bad request document (docs/API.md, section 6). */
const invalidImage = (detail: string) => new ApiError(400, 'invalid_image', 'Invalid image', detail);

/**
 * Image upload and reading. Uploads are checked for real: the magic bytes must be the declared
 * format and the header must give a width and height. Bytes go through ImageStore.
 */
@Injectable()
export class ImagesService {
  constructor(
    private readonly sql: Sql,
    private readonly images: ImagesRepository,
    private readonly store: ImageStore,
  ) {}

  async upload(tenant: Tenant, declaredType: string | undefined, body: unknown, url: ImageUrl): Promise<ResourceObject> {
    const type = (declaredType ?? '').split(';')[0].trim().toLowerCase();
    if (!isImageContentType(type) || !Buffer.isBuffer(body)) {
      throw new ApiError(415, 'unsupported_media_type', 'Unsupported media type', 'Send the image bytes with Content-Type image/png, image/jpeg, image/webp or image/gif.', {
        header: 'Content-Type',
      });
    }
    if (body.length === 0) throw invalidImage('The request body is empty.');
    const actual = sniffImageType(body);
    if (actual !== type) {
      throw invalidImage(actual ? `The bytes are ${actual}, not the declared ${type}.` : `The bytes are not a ${type} image.`);
    }
    let dimensions;
    try {
      dimensions = readImageDimensions(type, body);
    } catch (error) {
      if (error instanceof ImageFormatError) throw invalidImage(error.message);
      throw error;
    }
    const sha256 = createHash('sha256').update(body).digest('hex');
    const row = await this.sql.transaction(async () => {
      const inserted = await this.images.insert(tenant, { contentType: type, size: body.length, ...dimensions, sha256 });
      await this.store.put(inserted.id, body);
      return inserted;
    });
    return imageResource(row, url);
  }

  async get(tenant: Tenant, id: string, url: ImageUrl, fields: Fieldsets = {}): Promise<ResourceObject> {
    const row = await this.images.findReadable(tenant, id);
    if (!row) throw notFound('No such image.');
    return sparseResource(imageResource(row, url), fields);
  }

  async content(tenant: Tenant, id: string): Promise<ImageContent> {
    const row = await this.images.findReadable(tenant, id);
    if (!row) throw notFound('No such image.');
    return {
      contentType: row.content_type,
      etag: `"${row.sha256}"`,
      read: async () => {
        const bytes = await this.store.get(id);
        if (!bytes) throw new Error(`image ${id} has metadata but no stored bytes`);
        return bytes;
      },
    };
  }
}
