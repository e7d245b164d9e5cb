/** The OpenAPI description of the image routes: the image resource and its document. */
import { EXAMPLE_BASE_URL, EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { resourceForms, singleDocument, TIMESTAMP, URL_SCHEMA } from '../common/openapi/schemas.js';
import { IMAGE_CONTENT_TYPES } from './image-format.js';
import { imageContentPath } from './image-links.js';
import { imageResource } from './image.resource.js';
import type { ImageRow } from './images.repository.js';

const SAMPLE_ROW: ImageRow = {
  id: EXAMPLE_IDS.images,
  organization_id: EXAMPLE_IDS.organizations,
  content_type: 'image/png',
  size: 48213,
  width: 1200,
  height: 630,
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  created: '2026-11-21T19:26:03.123456Z',
};

/** An image's absolute content URL, as the examples show it. */
export const exampleImageUrl = (id: string) => `${EXAMPLE_BASE_URL}${imageContentPath(id)}`;

const sample = imageResource(SAMPLE_ROW, exampleImageUrl);

const FORMS = resourceForms({
  type: 'images',
  attributes: {
    'content-type': { type: 'string', enum: [...IMAGE_CONTENT_TYPES] },
    size: { type: 'integer', minimum: 1, description: 'Bytes.' },
    width: { type: 'integer', minimum: 1, description: 'Pixels.' },
    height: { type: 'integer', minimum: 1, description: 'Pixels.' },
    url: { ...URL_SCHEMA, description: 'The absolute URL of the bytes (`GET /images/<IMAGE_ID>/content`).' },
    created: TIMESTAMP,
  },
  forms: { ImageResource: { sample, description: 'An uploaded image (its metadata; the bytes are at `url`).' } },
});

export const IMAGE_DOCUMENT = singleDocument('ImageDocument', FORMS.ImageResource, sample);
