import { ApiError, invalidDocument } from '../common/json-api/api-error.js';
import { AggregateApiError } from '../common/json-api/error-mapper.js';
import { isPlainObject, isUuid } from '../common/value-checks.js';
import { ATOMIC_EXTENSION, ATOMIC_MEDIA_TYPE, JSON_API_MEDIA_TYPE } from '../common/json-api/resource.js';
import { ResourceBodyPipe, type ResourceDocument } from '../common/json-api/resource-body.js';
import { CreateEventAttributes, UpdateEventAttributes } from '../events/dto/event.dto.js';
import { CreateTwinAttributes, UpdateTwinAttributes } from '../twins/dto/twin-attributes.dto.js';
import { readPositionOperation, type Position, type PositionWindow } from '../twins/positions/position-body.js';

/**
 * The JSON:API Atomic Operations document of `POST /operations` (https://jsonapi.org/ext/atomic): its
 * media type, its limits, and how it is read into typed operations. Each operation's `data` is checked
 * by the same pipe, with the same options, as the single-resource route it stands for (`POST /events/`,
 * `PATCH /events/<id>`, `POST /my/twins/`, `PATCH /my/twins/<id>`; a position as one of
 * `POST /twins/<id>/positions`, naming its twin in `relationships.twin`), so a batch accepts exactly what
 * those routes accept; only the pointers of its errors are moved under `/atomic:operations/<n>`.
 */

/** The media type of the document and of its answer (defined with the service's other media types). */
export { ATOMIC_MEDIA_TYPE };
/** Operations per request. */
export const MAX_OPERATIONS = 1000;
/** The request body limit of `POST /operations` (bigger: 413), above the service's per-request default. */
export const OPERATIONS_BODY_LIMIT = 5 * 1024 * 1024;

export type Operation =
  | { op: 'add'; type: 'events'; document: ResourceDocument<CreateEventAttributes> }
  | { op: 'update'; type: 'events'; id: string; document: ResourceDocument<UpdateEventAttributes> }
  | { op: 'remove'; type: 'events'; id: string }
  | { op: 'add'; type: 'twins'; document: ResourceDocument<CreateTwinAttributes> }
  | { op: 'update'; type: 'twins'; id: string; document: ResourceDocument<UpdateTwinAttributes> }
  | { op: 'add'; type: 'positions'; twinId: string; position: Position };

/** An operation as read: valid, or the reason it is not (reported only if no earlier operation fails). */
export type ReadOperation = Operation | { invalid: ApiError | AggregateApiError };

const PIPES = {
  'add events': new ResourceBodyPipe({ type: 'events', attributes: CreateEventAttributes, id: 'client' }),
  'update events': new ResourceBodyPipe({ type: 'events', attributes: UpdateEventAttributes, id: 'required' }),
  'add twins': new ResourceBodyPipe({ type: 'twins', attributes: CreateTwinAttributes, id: 'client' }),
  'update twins': new ResourceBodyPipe({ type: 'twins', attributes: UpdateTwinAttributes, id: 'optional' }),
};

const TYPES = new Set(['events', 'twins', 'positions']);
const TYPE_RULE = '"type" must be "events", "twins" or "positions".';
const OPS = new Set(['add', 'update', 'remove']);

/**
 * The request's media type must name the atomic extension (JSON:API: a server answers 415 to a media
 * type whose `ext` it does not apply). `ext` is a space-separated list of URIs.
 */
export function assertAtomicMediaType(contentType: string | undefined): void {
  const ext = /;\s*ext\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (media === JSON_API_MEDIA_TYPE && ext && (ext[1] ?? ext[2]).split(/\s+/).includes(ATOMIC_EXTENSION)) return;
  throw new ApiError(
    415,
    'unsupported_media_type',
    'Unsupported media type',
    `POST /operations takes Content-Type: ${ATOMIC_MEDIA_TYPE} (JSON:API Atomic Operations).`,
    { header: 'Content-Type' },
  );
}

/**
 * The operations of a request document, in order. A problem with the document itself (not an object,
 * no operations, too many) throws; a problem with one operation is returned in its place.
 */
export function readOperations(body: unknown, window: PositionWindow): ReadOperation[] {
  if (!isPlainObject(body)) throw invalidDocument('The request document must be a JSON object.', '');
  const operations = body['atomic:operations'];
  if (!Array.isArray(operations)) throw invalidDocument('"atomic:operations" must be an array of operations.', '/atomic:operations');
  if (operations.length === 0) throw invalidDocument('"atomic:operations" must hold at least one operation.', '/atomic:operations');
  if (operations.length > MAX_OPERATIONS) {
    throw invalidDocument(`At most ${MAX_OPERATIONS} operations per request (${operations.length} sent).`, '/atomic:operations');
  }
  const unknownMember = Object.keys(body).find((name) => name !== 'atomic:operations' && name !== 'meta' && name !== 'jsonapi');
  if (unknownMember !== undefined) throw invalidDocument(`Unknown member "${unknownMember}".`, `/${unknownMember.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  return operations.map((operation, index) => {
    try {
      return readOperation(operation, window);
    } catch (error) {
      if (error instanceof ApiError || error instanceof AggregateApiError) return { invalid: atOperation(index, error) };
      throw error;
    }
  });
}

function readOperation(operation: unknown, window: PositionWindow): Operation {
  // What is stored (`data`) is checked for unstorable text by its route's pipe; `ref` must be a UUID.
  if (!isPlainObject(operation)) throw invalidDocument('An operation must be an object {op, data | ref}.', '');
  const { op, ref, data } = operation;
  if (typeof op !== 'string' || !OPS.has(op)) throw invalidDocument('"op" must be "add", "update" or "remove".', '/op');
  if (operation.href !== undefined) throw invalidDocument('"href" is not supported: name the resource with "ref" or "data".', '/href');
  const unknown = Object.keys(operation).find((name) => !['op', 'ref', 'data', 'meta'].includes(name));
  if (unknown !== undefined) throw invalidDocument(`Unknown member "${unknown}".`, `/${unknown}`);
  if (isPlainObject(data) && data.lid !== undefined) {
    throw invalidDocument('"lid" is not supported: give a new resource its own UUID as "id" (a client-generated id).', '/data/lid');
  }
  const target = readRef(ref);
  if (op === 'remove') {
    if (data !== undefined) throw invalidDocument('A "remove" names its resource with "ref" and has no "data".', '/data');
    if (!target) throw invalidDocument('A "remove" needs "ref": {"type": "events", "id": …}.', '/ref');
    if (target.type !== 'events') throw new ApiError(403, 'forbidden', 'Forbidden', 'Only events can be removed in a batch.', { pointer: '/ref/type' });
    return { op, type: 'events', id: target.id };
  }
  if (isPlainObject(data) && data.type === 'positions') {
    if (op !== 'add') throw new ApiError(403, 'forbidden', 'Forbidden', 'Positions can only be added: a stored position is history.', { pointer: '/op' });
    if (target) throw invalidDocument('An "add" has no "ref".', '/ref');
    return { op: 'add', type: 'positions', ...readPositionOperation(data, window) };
  }
  if (!isPlainObject(data)) throw invalidDocument(`An "${op}" needs "data", a resource object.`, '/data');
  const type = data.type;
  if (typeof type !== 'string' || !TYPES.has(type)) throw invalidDocument(TYPE_RULE, '/data/type');
  if (op === 'add') {
    if (target) throw invalidDocument('An "add" has no "ref".', '/ref');
    const document = PIPES[`add ${type as 'events' | 'twins'}`].transform({ data });
    return type === 'events'
      ? { op, type, document: document as ResourceDocument<CreateEventAttributes> }
      : { op, type: 'twins', document: document as ResourceDocument<CreateTwinAttributes> };
  }
  if (target && target.type !== type) throw new ApiError(409, 'type_mismatch', 'Conflict', '"ref" and "data" must name the same type.', { pointer: '/ref/type' });
  const document = PIPES[`update ${type as 'events' | 'twins'}`].transform({ data });
  const id = target?.id ?? document!.id?.toLowerCase();
  if (id === undefined) throw invalidDocument('An "update" names its resource with "data.id" or "ref".', '/data/id');
  if (!isUuid(id)) throw invalidDocument('"id" must be a UUID.', '/data/id');
  if (document!.id !== undefined && document!.id.toLowerCase() !== id) {
    throw new ApiError(409, 'id_mismatch', 'Conflict', '"data.id" must be the id of "ref".', { pointer: '/data/id' });
  }
  return type === 'events'
    ? { op: 'update', type, id, document: document as ResourceDocument<UpdateEventAttributes> }
    : { op: 'update', type: 'twins', id, document: document as ResourceDocument<UpdateTwinAttributes> };
}

function readRef(ref: unknown): { type: string; id: string } | undefined {
  if (ref === undefined) return undefined;
  if (!isPlainObject(ref)) throw invalidDocument('"ref" must be {"type": …, "id": …}.', '/ref');
  if (typeof ref.type !== 'string' || !TYPES.has(ref.type)) throw invalidDocument(TYPE_RULE, '/ref/type');
  if (ref.lid !== undefined) throw invalidDocument('"lid" is not supported: name resources by "id".', '/ref/lid');
  if (!isUuid(ref.id)) throw invalidDocument('"id" must be a UUID.', '/ref/id');
  return { type: ref.type, id: ref.id.toLowerCase() };
}

/**
 * The error of operation `index`, as the batch answers it: pointers into the operation's own document
 * move under `/atomic:operations/<index>`, and an error that named no member points at the operation.
 */
export function atOperation(index: number, error: ApiError | AggregateApiError): ApiError | AggregateApiError {
  if (error instanceof AggregateApiError) return new AggregateApiError(error.status, error.errors.map((one) => atOperation(index, one) as ApiError));
  const base = `/atomic:operations/${index}`;
  const source = error.source?.pointer !== undefined ? { pointer: `${base}${error.source.pointer}` } : error.source?.header || error.source?.parameter ? error.source : { pointer: base };
  return new ApiError(error.status, error.code, error.title, error.detail, source, error.headers);
}
