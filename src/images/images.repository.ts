import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import type { Tenant } from '../common/auth/tenant.js';
import { images, select, type ColumnOf, type Row } from '../database/schema/index.js';
import { tableShape } from '../database/row-shape.js';

/** An image's description: every column but the content. */
const IMAGE_COLUMNS = ['id', 'organization_id', 'content_type', 'size', 'width', 'height', 'sha256', 'created'] as const satisfies readonly ColumnOf<typeof images>[];
export type ImageRow = Pick<Row<typeof images>, (typeof IMAGE_COLUMNS)[number]>;

export interface NewImage {
  contentType: string;
  size: number;
  width: number;
  height: number;
  sha256: string;
}

const COLUMNS = select(images, 'i', { only: IMAGE_COLUMNS });
const IMAGE = tableShape(images, IMAGE_COLUMNS);
const BYTES = tableShape(images, ['bytes']);

/**
 * Who may read an image (docs/API.md, section 11): its own organization, anyone authenticated when a
 * public quest uses it as summary image (it is on everyone's discovery feed), and an organization
 * one of whose quests uses it (a copy made by embarking keeps the original's image). `$1` is the
 * caller's organization.
 */
const READABLE = `(i.organization_id = $1 OR EXISTS (
    SELECT 1 FROM quests q WHERE q.summary_image_id = i.id AND (q.public OR q.organization_id = $1)))`;

/** SQL for images: metadata, visibility, and the bytes column used by DatabaseImageStore. */
@Injectable()
export class ImagesRepository {
  constructor(private readonly sql: Sql) {}

  async insert(tenant: Tenant, image: NewImage): Promise<ImageRow> {
    const [row] = await this.sql.rows(
      IMAGE,
      `INSERT INTO images AS i (organization_id, content_type, size, width, height, sha256)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING ${COLUMNS}`,
      [tenant.organization.id, image.contentType, image.size, image.width, image.height, image.sha256],
    );
    return row;
  }

  /** An image the tenant may read, or undefined. */
  async findReadable(tenant: Tenant, id: string): Promise<ImageRow | undefined> {
    return this.sql.first(IMAGE, `SELECT ${COLUMNS} FROM images i WHERE i.id = $2 AND ${READABLE}`, [tenant.organization.id, id]);
  }

  /** Whether the image belongs to the tenant's organization (only those can become a summary image). */
  async ownedBy(tenant: Tenant, id: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM images WHERE id = $2 AND organization_id = $1`, [tenant.organization.id, id]);
  }

  async writeBytes(id: string, bytes: Buffer): Promise<void> {
    await this.sql.run(`UPDATE images SET bytes = $2 WHERE id = $1`, [id, bytes]);
  }

  async readBytes(id: string): Promise<Buffer | undefined> {
    return (await this.sql.first(BYTES, `SELECT bytes FROM images WHERE id = $1`, [id]))?.bytes ?? undefined;
  }
}
