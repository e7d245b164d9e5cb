import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** An uploaded image (docs/API.md, section 11). Reads and writes go through ImagesRepository's SQL. */
@Entity('images')
@Index('images_organization_idx', ['organizationId', 'created'])
@Check('images_size_check', '"size" > 0')
@Check('images_width_check', '"width" > 0')
@Check('images_height_check', '"height" > 0')
export class ImageEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'images_organization_id_fkey' })
  organization: OrganizationEntity;

  @Column({ type: 'varchar', length: 64, name: 'content_type' })
  contentType: string;

  @Column({ type: 'integer' })
  size: number;

  @Column({ type: 'integer' })
  width: number;

  @Column({ type: 'integer' })
  height: number;

  /** Hex SHA-256 of the bytes; the strong ETag of the content. */
  @Column({ type: 'char', length: 64 })
  sha256: string;

  /** The content while images live in the database; null when an external store holds it. */
  @Column({ type: 'bytea', nullable: true })
  bytes: Buffer | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;
}
