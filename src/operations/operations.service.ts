import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { IdempotencyKeys } from '../common/idempotency/idempotency-keys.js';
import type { Tenant, TwinTenant } from '../common/auth/tenant.js';
import { ApiError, idExists, invalidDocument, invalidHeader } from '../common/json-api/api-error.js';
import { AggregateApiError } from '../common/json-api/error-mapper.js';
import { JsonText, type ResourceObject } from '../common/json-api/resource.js';
import { canonicalJson } from '../events/event-data.js';
import { EventsService } from '../events/events.service.js';
import { PositionsService, UnknownTwin, type PositionCounts } from '../twins/positions/positions.service.js';
import { TwinsService } from '../twins/twins.service.js';
import { atOperation, readOperations, type Operation, type ReadOperation } from './atomic-document.js';

/**
 * The answer of a batch: `{"atomic:results": [...]}`, one entry per operation, the resource it left
 * (`{"data": …}`) or `{}` (a removal). Built as JSON text: an event add's resource is the text PostgreSQL
 * built for the change log. A replayed answer is the stored document, parsed.
 */
export type AtomicAnswer = JsonText | { 'atomic:results': unknown[] };

type EventAdd = Extract<Operation, { op: 'add'; type: 'events' }>;
const isEventAdd = (operation: ReadOperation): operation is EventAdd => !('invalid' in operation) && operation.op === 'add' && operation.type === 'events';
type PositionAdd = Extract<Operation, { type: 'positions' }>;
const isPositionAdd = (operation: ReadOperation): operation is PositionAdd => !('invalid' in operation) && operation.type === 'positions';

/**
 * `POST /operations` (JSON:API Atomic Operations): every operation in one transaction, in order, by the
 * rules of the route it stands for (the events and twins services do the work); the first one that fails
 * fails the batch, with its error under `/atomic:operations/<n>`, and nothing is stored. Consecutive
 * event `add`s are one INSERT: a thousand events are one statement, not a thousand round trips; so are
 * consecutive position `add`s (each answered `{}`; the document's `meta.positions` counts them as an
 * upload's answer does, and each moved twin gets one `twin.moved` change per run of them).
 */
@Injectable()
export class OperationsService {
  constructor(
    private readonly sql: Sql,
    private readonly events: EventsService,
    private readonly twins: TwinsService,
    private readonly positions: PositionsService,
    private readonly idempotencyKeys: IdempotencyKeys,
  ) {}

  /**
   * Runs the batch; with an `Idempotency-Key` (kept per acting twin, like those of `POST /events/`), a
   * retry of the same batch answers the first answer (`replayed`) and another batch under the key is a 422.
   */
  async run(tenant: Tenant, body: unknown, idempotencyKey: string | undefined): Promise<{ results: AtomicAnswer; replayed: boolean }> {
    const operations = readOperations(body, this.positions.window());
    if (idempotencyKey === undefined) return { results: await this.sql.transaction(() => this.apply(tenant, operations)), replayed: false };
    const outcome = await this.idempotencyKeys.run<AtomicAnswer>(this.actingTwin(tenant, 'An Idempotency-Key is kept per acting twin: send X-Twin with it.'), idempotencyKey, batchHash(body), async () => ({
      body: await this.apply(tenant, operations),
    }));
    return { results: outcome.body, replayed: outcome.replayed };
  }

  private async apply(tenant: Tenant, operations: ReadOperation[]): Promise<JsonText> {
    // Each result's JSON text, joined at the end.
    const results: string[] = [];
    let positions: PositionCounts | undefined;
    for (let index = 0; index < operations.length; ) {
      const operation = operations[index];
      if ('invalid' in operation) throw operation.invalid;
      if (isPositionAdd(operation)) {
        let end = index + 1;
        while (end < operations.length && isPositionAdd(operations[end])) end++;
        const counts = await this.addPositions(tenant, operations.slice(index, end) as PositionAdd[], index);
        positions = { received: (positions?.received ?? 0) + counts.received, new: (positions?.new ?? 0) + counts.new };
        for (let i = index; i < end; i++) results.push('{}');
        index = end;
        continue;
      }
      if (isEventAdd(operation)) {
        let end = index + 1;
        while (end < operations.length && isEventAdd(operations[end])) end++;
        for (const resource of await this.addEvents(tenant, operations.slice(index, end) as EventAdd[], index)) results.push(`{"data":${resource.text}}`);
        index = end;
        continue;
      }
      const resource = await this.atIndex(index, () => this.applyOne(tenant, operation, index));
      results.push(resource === null ? '{}' : resource instanceof JsonText ? `{"data":${resource.text}}` : JSON.stringify({ data: resource }));
      index++;
    }
    const meta = positions ? `,"meta":${JSON.stringify({ positions })}` : '';
    return new JsonText(`{"atomic:results":[${results.join(',')}]${meta}}`);
  }

  /** A run of position adds, one statement; a twin not the organization's fails the first operation naming it. */
  private async addPositions(tenant: Tenant, run: PositionAdd[], first: number): Promise<PositionCounts> {
    try {
      return await this.positions.record(
        tenant,
        run.map((operation) => operation.twinId),
        run.map((operation) => operation.position),
      );
    } catch (error) {
      if (!(error instanceof UnknownTwin)) throw error;
      const index = first + run.findIndex((operation) => operation.twinId === error.twinId);
      throw atOperation(index, new ApiError(404, error.code, error.title, error.detail, { pointer: '/data/relationships/twin' }));
    }
  }

  private async addEvents(tenant: Tenant, run: EventAdd[], first: number): Promise<JsonText[]> {
    const twinTenant = await this.atIndex(first, async () => this.actingTwin(tenant));
    const stored = await this.atIndex(first, () => this.events.addMany(twinTenant, run.map((operation) => operation.document)));
    const taken = stored.findIndex((resource) => resource === undefined);
    if (taken >= 0) throw atOperation(first + taken, idExists('event', run[taken].document.id!));
    return stored as JsonText[];
  }

  /** The resource the operation left, or null (a removal). */
  private async applyOne(tenant: Tenant, operation: Exclude<Operation, PositionAdd>, index: number): Promise<ResourceObject | JsonText | null> {
    switch (operation.type) {
      case 'events': {
        const twinTenant = this.actingTwin(tenant);
        if (operation.op === 'update') return (await this.events.update(twinTenant, operation.id, operation.document)).value;
        if (operation.op === 'remove') {
          await this.events.delete(twinTenant, operation.id, undefined);
          return null;
        }
        throw new Error(`event adds run in bulk (operation ${index})`);
      }
      case 'twins':
        if (operation.op === 'add') return (await this.twins.create(tenant, operation.document)).answer.value;
        return (await this.twins.update(tenant, operation.id, operation.document)).value;
    }
  }

  /** Event operations act on the `X-Twin` timeline, as `/events/` does. */
  private actingTwin(tenant: Tenant, detail = 'Operations on events act on the timeline of the X-Twin twin: send X-Twin.'): TwinTenant {
    if (!tenant.twin) throw invalidHeader('X-Twin', detail);
    return tenant as TwinTenant;
  }

  /** Runs operation `index`'s work; its refusal becomes the batch's, pointing into that operation. */
  private async atIndex<T>(index: number, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ApiError && error.source?.header === 'X-Twin') throw error;
      if (error instanceof ApiError || error instanceof AggregateApiError) throw atOperation(index, error);
      throw error;
    }
  }
}

/** What an Idempotency-Key of a batch is compared by: its operations, whatever their key order or spacing. */
function batchHash(body: unknown): string {
  const operations = (body as Record<string, unknown>)['atomic:operations'];
  if (operations === undefined) throw invalidDocument('"atomic:operations" is required.', '/atomic:operations');
  return createHash('sha256').update('operations\n').update(canonicalJson(operations)).digest('hex');
}
