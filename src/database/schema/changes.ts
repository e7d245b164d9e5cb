import { defineTable } from './table.js';

/**
 * The change log (migration ChangeLog): one row per committed change of an event, twin or quest,
 * written by the changing statement. `position` is drawn by a trigger in commit order per twin; the
 * event stream resumes from it and webhook deliveries are made from it (src/changes/).
 */
export const changes = defineTable(
  'changes',
  {
    position: { type: 'bigint', primary: true },
    organization_id: { type: 'uuid' },
    /** The twin whose timeline (or self) changed; null for changes of no twin (a quest published). */
    twin_id: { type: 'uuid', nullable: true },
    /** The webhook event type: `event.created`, `twin.updated`, `quest.embarked`, … */
    kind: { type: 'varchar', length: 32 },
    /** The changed resource's id. */
    subject_id: { type: 'uuid' },
    /** An event's name and category after the change (before it, for a deletion): what stream filters compare. */
    name: { type: 'varchar', length: 255, nullable: true },
    category: { type: 'varchar', length: 255, nullable: true },
    /** The resource's JSON text as committed (a deletion: its identifier), passed through untouched. */
    resource: { type: 'text' },
    changed: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [
      { name: 'changes_twin_idx', columns: ['twin_id', 'position'] },
      // A BRIN index (migration ChangeLog), which TypeORM cannot declare: the migration owns it.
      { name: 'changes_changed_idx', synchronize: false },
    ],
  },
);

/** How far the change log was pruned: positions up to `pruned_through` are gone (a resume from before them is a `reset`). */
export const changeLogState = defineTable(
  'change_log_state',
  {
    singleton: { type: 'boolean', primary: true, default: true },
    pruned_through: { type: 'bigint', default: 0 },
  },
  { checks: [{ name: 'change_log_state_singleton_check', expression: 'singleton' }] },
);

/**
 * The twins with an open event stream, per instance (migration StreamedTwins): the writes announce a
 * change only when its twin is here (src/events/streamed-twins.ts keeps it).
 */
export const streamedTwins = defineTable(
  'streamed_twins',
  {
    twin_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'streamed_twins_pkey' },
    instance_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'streamed_twins_pkey' },
    /** Kept ahead by the instance while it lives; any instance deletes rows past it (an instance that died). */
    expires: { type: 'timestamptz' },
  },
  { indices: [{ name: 'streamed_twins_instance_idx', columns: ['instance_id'] }] },
);
