import type { ResourceObject } from '../common/json-api/resource.js';
import type { ImageUrl } from './image-links.js';
import type { ImageRow } from './images.repository.js';

export function imageResource(row: ImageRow, url: ImageUrl): ResourceObject {
  return {
    type: 'images',
    id: row.id,
    attributes: {
      'content-type': row.content_type,
      size: row.size,
      width: row.width,
      height: row.height,
      url: url(row.id),
      created: row.created,
    },
  };
}
