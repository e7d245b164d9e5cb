import { Inject, Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { IdempotencyKeys } from '../common/idempotency/idempotency-keys.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import { idExists, invalidDocument, notFound, preconditionFailed } from '../common/json-api/api-error.js';
import { Tagged, versionedRead, type Conditional } from '../common/json-api/envelope.js';
import { cursorPageOfJson, cursorRequest, cursorScope, CursorCodec, type CursorPage } from '../common/json-api/cursor.js';
import { isCursorPaging, type Page, pageOfJson, pageRequest } from '../common/json-api/pagination.js';
import { representationVariant, sparseResource } from '../common/json-api/representation.js';
import { assertIdMatchesPath, type ResourceDocument } from '../common/json-api/resource-body.js';
import { JsonText, type ResourceObject, type Precondition } from '../common/json-api/resource.js';
import type { CreateEventAttributes, UpdateEventAttributes } from './dto/event.dto.js';
import { MAX_EVENT_DATA_BYTES, requestHash, serializedSize } from './event-data.js';
import { EventBus, type EventChange } from './event-bus.js';
import { ChangeLog } from '../database/change-log.js';
import { eventResource } from './event.resource.js';
import { EventStreams, type OpenStreamOptions, type StreamMessage, type StreamResume, type StreamStart } from './event-streams.js';
import { EventsRepository, type ChangedEvent, type EventChanges, type NewEvent } from './events.repository.js';
import type { EventQuery, TimelineQuery } from './timeline-query.js';
import { uuidv7 } from './uuidv7.js';



export interface CreatedEvent {
  id: string;
  /** The resource as the change log recorded it, or (a replay) as the idempotency key kept it. */
  resource: JsonText | ResourceObject;
  /** True when an earlier request with the same Idempotency-Key already created it. */
  replayed: boolean;
}

@Injectable()
export class EventsService {

  constructor(
    private readonly sql: Sql,
    private readonly events: EventsRepository,
    private readonly bus: EventBus,
    private readonly streams: EventStreams,
    private readonly changeLog: ChangeLog,
    private readonly cursors: CursorCodec,
    private readonly idempotencyKeys: IdempotencyKeys,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Stores a new event; answers only after its commit. Its id is the client's when the document has one
   * (apps that record offline name their events; an id already taken is a 409), else a new UUIDv7.
   * With an idempotency key, the key is claimed (INSERT … ON CONFLICT on its unique key) in the same
   * transaction as the event: a concurrent retry waits for that transaction and then finds the key
   * taken, so one key never makes two events.
   */
  async create(tenant: TwinTenant, document: ResourceDocument<CreateEventAttributes>, idempotencyKey: string | undefined): Promise<CreatedEvent> {
    const { name, category, data, occurred = null } = document.attributes;
    const event = { id: document.id ?? uuidv7(), name, category, data, occurred };
    if (idempotencyKey === undefined) {
      const row = await this.insert(tenant, event);
      this.announce('created', tenant, row);
      return { id: row.id, resource: new JsonText(row.document), replayed: false };
    }
    const outcome = await this.idempotencyKeys.run<JsonText | ResourceObject>(tenant, idempotencyKey, requestHash({ ...event, id: document.id }), async () => {
      const row = await this.insert(tenant, event);
      this.announce('created', tenant, row);
      return { body: new JsonText(row.document), eventId: row.id };
    });
    // A replay's body is the stored document, parsed: its id is the event's.
    const id = outcome.body instanceof JsonText ? event.id : (outcome.body as ResourceObject).id;
    return { id, resource: outcome.body, replayed: outcome.replayed };
  }

  /**
   * Stores a batch's run of new events in one statement (POST /operations), in the caller's transaction;
   * each one's resource (its JSON text) in input order, or undefined where its client-chosen id is taken
   * (by an earlier event, or earlier in the same run): the caller decides what that means for the batch.
   */
  async addMany(tenant: TwinTenant, documents: ResourceDocument<CreateEventAttributes>[]): Promise<(JsonText | undefined)[]> {
    const batch: NewEvent[] = documents.map(({ id, attributes: { name, category, data, occurred = null } }) => ({ id: id ?? uuidv7(), name, category, data, occurred }));
    const changes = new Map((await this.events.insertMany(tenant, batch, this.bus.channel)).map((change) => [change.subject_id, change]));
    // In input order, which is the order of their positions.
    return batch.map((event) => {
      const change = changes.get(event.id);
      if (change === undefined) return undefined;
      // The second use of an id within the run was not stored: the first one's row is not its own.
      changes.delete(event.id);
      this.announceChange(tenant, { position: change.position, op: 'created', id: change.subject_id, name: change.name ?? '', category: change.category ?? '', data: change.resource });
      return new JsonText(change.resource);
    });
  }

  /** Hands a change to the bus once it committed (the bus delivers it itself, or lets PostgreSQL's NOTIFY do it). */
  private announce(op: EventChange['op'], tenant: TwinTenant, row: ChangedEvent): void {
    // PostgreSQL announces it itself (the statement's NOTIFY): nothing for that bus.
    if (this.bus.channel !== null) return;
    this.announceChange(tenant, { position: row.position, op, id: row.id, name: row.name, category: row.category, data: row.document });
  }

  /** A change whose JSON text is already at hand (a batch's, a deletion's), to the in-process bus after commit. */
  private announceChange(tenant: TwinTenant, change: Omit<EventChange, 'twinId'>): void {
    if (this.bus.channel !== null) return;
    this.sql.afterCommit(() => this.bus.committed({ ...change, twinId: tenant.twin.id }));
  }

  private async insert(tenant: TwinTenant, event: NewEvent): Promise<ChangedEvent> {
    const row = await this.events.insert(tenant, event, this.bus.channel);
    if (!row) throw idExists('event', event.id);
    return row;
  }

  /** `GET /events/<EVENT_ID>`, tagged with the event's version (a conditional GET reads only the version). */
  get(tenant: TwinTenant, id: string, { fields }: EventQuery): Conditional<ResourceObject> | Promise<ResourceObject> {
    return versionedRead({
      variant: representationVariant(fields),
      includes: false,
      version: () => this.events.version(tenant, id),
      build: async () => {
        const row = await this.events.find(tenant, id);
        if (!row) throw notFound('No such event on the timeline of this twin.');
        return { value: sparseResource(eventResource(row), fields), version: row.version };
      },
    });
  }


  /** `GET /events/`: newest first unless `sort=timestamp`; numbered or keyset pages. */
  async list(tenant: TwinTenant, { page: pageParams, fields, include: _include, sort, ...filter }: TimelineQuery): Promise<Page<JsonText> | CursorPage> {
    const limits = { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax };
    const document = { ascending: sort !== undefined && !sort[0].descending, fieldset: fields.events };
    if (isCursorPaging(pageParams)) {
      const request = cursorRequest(pageParams, limits, this.cursors, cursorScope('events', sort ?? [{ key: 'timestamp', descending: true }]));
      return cursorPageOfJson(request, await this.events.keysetTimeline(tenant, filter, request, document), this.cursors);
    }
    const page = pageRequest(pageParams, limits);
    return pageOfJson(page, await this.events.pageTimeline(tenant, filter, page, document));
  }

  /**
   * Merges the patch in one statement. The merged data's jsonb text is never shorter than its compact
   * serialisation (the limit's measure), so when that text fits, the one statement is the whole update.
   * Otherwise (or when there is no such event) it is tried again in a transaction that measures the
   * merge exactly and rolls back with a 400 when it is over the limit.
   */
  async update(tenant: TwinTenant, id: string, document: ResourceDocument<UpdateEventAttributes>, precondition?: Precondition): Promise<Tagged<JsonText>> {
    assertIdMatchesPath(document.id, id);
    const { name, category, data, occurred } = document.attributes;
    const changes = { name, category, data, occurred };
    const versions = precondition && !precondition.any ? precondition.versions : null;
    const row =
      (await this.events.update(tenant, id, changes, this.bus.channel, { maxDataTextBytes: MAX_EVENT_DATA_BYTES, versions })) ??
      (await this.updateMeasured(tenant, id, changes, versions));
    this.announce('updated', tenant, row);
    return Tagged.ofVersion(new JsonText(row.document), row.version);
  }

  /**
   * The exact path of `update`: merge, measure the compact serialisation, roll back when it is over the
   * limit. Also where an update that found nothing to change ends: 412 when the event is there but not
   * at a version If-Match named, else 404.
   */
  private updateMeasured(tenant: TwinTenant, id: string, changes: EventChanges, versions: string[] | null): Promise<ChangedEvent> {
    return this.sql.transaction(async () => {
      const updated = await this.events.update(tenant, id, changes, this.bus.channel, { versions });
      if (!updated) throw await this.missing(tenant, id, versions);
      if (serializedSize(updated.data) > MAX_EVENT_DATA_BYTES) {
        throw invalidDocument(`The merged data would exceed ${MAX_EVENT_DATA_BYTES} bytes serialised.`, '/data/attributes/data');
      }
      return updated;
    });
  }

  async delete(tenant: TwinTenant, id: string, document: ResourceDocument<unknown> | undefined, precondition?: Precondition): Promise<void> {
    if (document) assertIdMatchesPath(document.id, id);
    const versions = precondition && !precondition.any ? precondition.versions : null;
    const deleted = await this.events.delete(tenant, id, this.bus.channel, versions);
    if (!deleted) throw await this.missing(tenant, id, versions);
    this.announceChange(tenant, { position: deleted.position, op: 'deleted', id, name: deleted.name, category: deleted.category, data: deleted.resource });
  }

  /**
   * `GET /events/stream`: validates, then opens the twin's stream of messages (see EventStreams).
   * Everything that can be refused is refused here, before the caller has sent anything.
   */
  async stream(
    tenant: TwinTenant,
    resume: StreamResume | undefined,
    options: OpenStreamOptions = {},
  ): Promise<AsyncIterableIterator<StreamMessage>> {
    return this.streams.open(tenant, await this.streamStart(tenant, resume), options);
  }

  /**
   * Where a stream starts: after the position asked for, or after the event's creation. A position the
   * log can no longer continue from (pruned past the retention, unknown) is a reset.
   */
  private async streamStart(tenant: TwinTenant, resume: StreamResume | undefined): Promise<StreamStart> {
    if (resume === undefined) return {};
    const position = 'position' in resume ? resume.position : await this.events.creationPosition(tenant, resume.eventId);
    const { ok, head } = position === undefined ? { ok: false, head: (await this.changeLog.resumable('0')).head } : await this.changeLog.resumable(position);
    return ok ? { after: position! } : { after: head, reset: true };
  }

  /** Why a write found no event: it is there at another version than If-Match named (412), or not there (404). */
  private async missing(tenant: TwinTenant, id: string, versions: string[] | null) {
    if (versions && (await this.events.version(tenant, id)) !== undefined) return preconditionFailed();
    return notFound('No such event on the timeline of this twin.');
  }
}
