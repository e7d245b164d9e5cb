import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { QuestEntity } from '../quests/quest.entity.js';
import { TwinEntity } from '../twins/twin.entity.js';

/** One earning: a twin embarked on a quest and the quest's creating twin earned its price. */
@Entity('revenue_entries')
@Index('revenue_entries_quest_idx', ['questId'])
@Index('revenue_entries_twin_idx', ['twinId'])
@Check('revenue_entries_amount_check', '"amount" >= 0')
export class RevenueEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The original quest that was embarked on. */
  @Column({ type: 'uuid', name: 'quest_id' })
  questId: string;

  @ManyToOne(() => QuestEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'quest_id', foreignKeyConstraintName: 'revenue_entries_quest_id_fkey' })
  quest: QuestEntity;

  /** The receiving twin (the quest's creator). */
  @Column({ type: 'uuid', name: 'twin_id' })
  twinId: string;

  @ManyToOne(() => TwinEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'twin_id', foreignKeyConstraintName: 'revenue_entries_twin_id_fkey' })
  twin: TwinEntity;

  @Column({ type: 'uuid', name: 'embarking_twin_id', nullable: true })
  embarkingTwinId: string | null;

  @ManyToOne(() => TwinEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'embarking_twin_id', foreignKeyConstraintName: 'revenue_entries_embarking_twin_id_fkey' })
  embarkingTwin: TwinEntity | null;

  /** The copy the embark created. */
  @Column({ type: 'uuid', name: 'copy_id', nullable: true })
  copyId: string | null;

  @ManyToOne(() => QuestEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'copy_id', foreignKeyConstraintName: 'revenue_entries_copy_id_fkey' })
  copy: QuestEntity | null;

  @Column({ type: 'numeric', precision: 12, scale: 2 })
  amount: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created: string;
}
