import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { absoluteUrl } from '../common/http/request-url.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/** Absolute URL of an image's content, for `url` and `summary-image-url`. */
export type ImageUrl = (imageId: string) => string;

export const imageContentPath = (imageId: string) => `/images/${imageId}/content`;

/** imageContentPath as SQL, made absolute: `base` is the SQL of `imagesBase(…)`'s value, `imageId` of the id (null stays null). */
export const imageContentUrlSql = (base: string, imageId: string) => `(${base} || ${imageId} || '/content')`;

/** Builds image URLs against PUBLIC_URL, or the request's own host when it is unset. */
@Injectable()
export class ImageLinks {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  forRequest(request: FastifyRequest): ImageUrl {
    return (imageId) => absoluteUrl(request, imageContentPath(imageId), this.config.publicUrl);
  }

  /** The absolute URL of `/images/`, for image URLs PostgreSQL writes (imageContentUrlSql). */
  imagesBase(request: FastifyRequest): string {
    return absoluteUrl(request, '/images/', this.config.publicUrl);
  }
}
