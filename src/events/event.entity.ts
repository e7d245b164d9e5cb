import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { TwinEntity } from '../twins/twin.entity.js';

/** The events table (docs/API.md, section 14). Reads and writes go through EventsRepository's SQL. */
@Entity('events')
@Index('events_timeline_idx', ['twinId', 'timestamp', 'id'])
@Index('events_organization_idx', ['organizationId'])
@Check('events_data_object', `jsonb_typeof(data) = 'object'`)
export class EventEntity {
  /** UUIDv7 made by the service (uuidv7.ts), so ids sort by time. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'events_organization_id_fkey' })
  organization: OrganizationEntity;

  @Column({ type: 'uuid', name: 'twin_id' })
  twinId: string;

  @ManyToOne(() => TwinEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'twin_id', foreignKeyConstraintName: 'events_twin_id_fkey' })
  twin: TwinEntity;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  category: string;

  @Column({ type: 'jsonb', default: {} })
  data: Record<string, unknown>;

  @Column({ type: 'timestamptz', precision: 6, default: () => 'now()' })
  timestamp: string;

  @Column({ type: 'timestamptz', precision: 6, default: () => 'now()' })
  modified: string;
}

/** Idempotency keys of `POST /events/`, scoped to the acting twin. */
@Entity('idempotency_keys')
@Index('idempotency_keys_created_idx', ['created'])
export class IdempotencyKeyEntity {
  @PrimaryColumn({ type: 'uuid', name: 'twin_id', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  twinId: string;

  @ManyToOne(() => TwinEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'twin_id', foreignKeyConstraintName: 'idempotency_keys_twin_id_fkey' })
  twin: TwinEntity;

  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'idempotency_keys_pkey' })
  key: string;

  @Column({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'idempotency_keys_organization_id_fkey' })
  organization: OrganizationEntity;

  @Column({ type: 'char', length: 64, name: 'request_hash' })
  requestHash: string;

  @Column({ type: 'smallint', name: 'response_status', nullable: true })
  responseStatus: number | null;

  @Column({ type: 'jsonb', name: 'response_body', nullable: true })
  responseBody: Record<string, unknown> | null;

  @Column({ type: 'uuid', name: 'event_id', nullable: true })
  eventId: string | null;

  @Column({ type: 'timestamptz', precision: 6, default: () => 'now()' })
  created: string;
}
