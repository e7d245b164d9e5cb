import type { ResourceObject } from '../common/json-api/resource.js';
import { memberNames, resourceJsonSql, type ResourceSql } from '../common/json-api/resource-sql.js';
import { isoTimestampSql } from '../database/timestamps.js';
import { imageContentUrlSql, type ImageUrl } from './image-links.js';
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

/** imageResource as SQL of the images row aliased `i`; `imagesBase` is the SQL of the absolute URL of `/images/` (quests include their images). */
const imageSql = (i: string, imagesBase: string): ResourceSql => ({
  type: 'images',
  id: `${i}.id`,
  attributes: {
    'content-type': `${i}.content_type`,
    size: `${i}.size`,
    width: `${i}.width`,
    height: `${i}.height`,
    url: imageContentUrlSql(imagesBase, `${i}.id`),
    created: isoTimestampSql(`${i}.created`),
  },
});

export const imageJsonSql = (i: string, imagesBase: string, fieldset?: ReadonlySet<string>): string => resourceJsonSql(imageSql(i, imagesBase), fieldset);

/** What `fields[images]` may name. */
export const IMAGE_FIELDS = memberNames(imageSql('i', "''"));
