import { Column, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { GeoPoint } from '../database/geometry.js';
import { AccountEntity } from '../accounts/account.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** The twins table (docs/API.md, section 9). Reads go through TwinsRepository's SQL, not entity loading. */
@Entity('twins')
@Index('twins_organization_idx', ['organizationId', 'created', 'id'])
@Index('twins_created_idx', ['created', 'id'])
// Partial, GIN and expression indexes of migration 1763760000000-Twins, which TypeORM cannot describe:
// declared so the schema check leaves them alone.
@Index('twins_public_created_idx', { synchronize: false })
@Index('twins_supplier_created_idx', { synchronize: false })
@Index('twins_owner_created_idx', { synchronize: false })
@Index('twins_characteristics_gin', { synchronize: false })
@Index('twins_location_geography_gist', { synchronize: false })
// The foundation's partial unique index on imported places (organization_id, place_id).
@Index('twins_place_unique', { synchronize: false })
// Migration 1763790000000-TwinCounts: the two halves of the visibility rule in list order (partial).
@Index('twins_shared_created_idx', { synchronize: false })
@Index('twins_unshared_created_idx', { synchronize: false })
export class TwinEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'twins_organization_id_fkey' })
  organization: OrganizationEntity;

  /** The account that created the twin; null for imported places. */
  @Column({ type: 'uuid', name: 'owner_account_id', nullable: true })
  ownerAccountId: string | null;

  @ManyToOne(() => AccountEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'owner_account_id', foreignKeyConstraintName: 'twins_owner_account_id_fkey' })
  owner: AccountEntity | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'boolean', default: false })
  personal: boolean;

  @Column({ type: 'boolean', default: false })
  public: boolean;

  @Index('twins_location_gist', { spatial: true })
  @Column({ type: 'geometry', spatialFeatureType: 'Point', srid: 4326, nullable: true })
  location: GeoPoint | null;

  // A database-generated uuid (DEFAULT gen_random_uuid()), declared the way TypeORM reads it back.
  @Column({ type: 'uuid', name: 'personality_id' })
  @Generated('uuid')
  personalityId: string;

  @Column({ type: 'text', array: true, default: '{}' })
  characteristics: string[];

  @Column({ type: 'text', array: true, default: '{}' })
  services: string[];

  @Column({ type: 'uuid', array: true, default: '{}' })
  connections: string[];

  @Column({ type: 'jsonb', name: 'meta_data', default: {} })
  metaData: Record<string, unknown>;

  @Column({ type: 'varchar', length: 255, name: 'place_id', nullable: true })
  placeId: string | null;

  @Column({ type: 'varchar', length: 255, default: '' })
  provider: string;

  @Column({ type: 'jsonb', name: 'opening_hours', default: {} })
  openingHours: Record<string, unknown>;

  @Column({ type: 'varchar', length: 64, name: 'phone_number', default: '' })
  phoneNumber: string;

  @Column({ type: 'varchar', length: 512, default: '' })
  address: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  city: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  state: string;

  @Column({ type: 'varchar', length: 2048, default: '' })
  website: string;

  @Column({ type: 'jsonb', name: 'provider_info', default: { photos: [], reviews: [] } })
  providerInfo: Record<string, unknown>;

  @Column({ type: 'text', array: true, default: '{}' })
  tags: string[];

  /** Quest tasks naming this twin as their place, maintained in the same transaction as the tasks. */
  @Column({ type: 'integer', name: 'tasks_supplied', default: 0 })
  tasksSupplied: number;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  modified: string;
}
