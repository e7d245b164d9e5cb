import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp } from '../common/json-api/resource-sql.js';
import { imageContentUrlSql, type ImageUrl } from './image-links.js';
import type { ImageRow } from './images.repository.js';

/**
 * An image. Its `url` is absolute: SQL writes it from `imagesBase` (the SQL of the absolute URL of
 * `/images/`), Node with the request's ImageUrl.
 */
const IMAGE = new ResourceForm<ImageRow, { imagesBase: string }, ImageUrl>({
  type: 'images',
  attributes: {
    'content-type': 'content_type',
    size: 'size',
    width: 'width',
    height: 'height',
    url: { sql: (i, { imagesBase }) => imageContentUrlSql(imagesBase, `${i}.id`), value: (row, url) => url(row.id) },
    created: timestamp('created'),
  },
});

export const imageResource = (row: ImageRow, url: ImageUrl): ResourceObject => IMAGE.resource(row, url);

/** An image's resource object in SQL, of the images row aliased `i` (quests include their images). */
export const imageJsonSql = (i: string, imagesBase: string, fieldset?: ReadonlySet<string>): string => IMAGE.sql(i, fieldset, { imagesBase });

/** What `fields[images]` may name. */
export const IMAGE_FIELDS = IMAGE.names;
