import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ImageEntity } from '../images/image.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { TwinEntity } from '../twins/twin.entity.js';

/** A quest or a copy of one made by embarking (docs/API.md, section 12). SQL lives in QuestsRepository. */
@Entity('quests')
@Index('quests_embark_unique', ['originalId', 'twinId'], { unique: true, where: 'original_id IS NOT NULL' })
@Index('quests_twin_idx', ['twinId', 'created', 'id'])
@Index('quests_public_idx', ['created', 'id'], { where: 'public' })
@Index('quests_organization_idx', ['organizationId'])
@Index('quests_summary_image_idx', ['summaryImageId'], { where: 'summary_image_id IS NOT NULL' })
@Check('quests_price_non_negative', '"price" >= 0')
@Check('quests_name_not_empty', 'length("name") > 0')
export class QuestEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', name: 'organization_id' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id', foreignKeyConstraintName: 'quests_organization_id_fkey' })
  organization: OrganizationEntity;

  /** The creating twin; for a copy, the twin that embarked. */
  @Column({ type: 'uuid', name: 'twin_id' })
  twinId: string;

  @ManyToOne(() => TwinEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'twin_id', foreignKeyConstraintName: 'quests_twin_id_fkey' })
  twin: TwinEntity;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', default: '' })
  summary: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'uuid', name: 'summary_image_id', nullable: true })
  summaryImageId: string | null;

  @ManyToOne(() => ImageEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'summary_image_id', foreignKeyConstraintName: 'quests_summary_image_id_fkey' })
  summaryImage: ImageEntity | null;

  @Column({ type: 'boolean', default: false })
  public: boolean;

  @Column({ type: 'uuid', name: 'original_id', nullable: true })
  originalId: string | null;

  @ManyToOne(() => QuestEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'original_id', foreignKeyConstraintName: 'quests_original_id_fkey' })
  original: QuestEntity | null;

  /** Exact decimal; pg hands it over as a string. */
  @Column({ type: 'numeric', precision: 12, scale: 2, default: 0 })
  price: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  modified: string;
}

/** One task of a quest, optionally at a place (a twin). */
@Entity('quest_tasks')
@Index('quest_tasks_quest_idx', ['questId', 'position', 'created', 'id'])
@Index('quest_tasks_place_idx', ['placeTwinId'], { where: 'place_twin_id IS NOT NULL' })
@Check('quest_tasks_position_check', '"position" >= 0')
export class QuestTaskEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid', name: 'quest_id' })
  questId: string;

  @ManyToOne(() => QuestEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'quest_id', foreignKeyConstraintName: 'quest_tasks_quest_id_fkey' })
  quest: QuestEntity;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'integer', default: 0 })
  position: number;

  @Column({ type: 'uuid', name: 'place_twin_id', nullable: true })
  placeTwinId: string | null;

  @ManyToOne(() => TwinEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'place_twin_id', foreignKeyConstraintName: 'quest_tasks_place_twin_id_fkey' })
  place: TwinEntity | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  modified: string;
}
