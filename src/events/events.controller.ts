import { Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { readIfMatch } from '../common/http/conditional.js';
import { ApiExtraModels, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type TwinTenant } from '../common/auth/tenant.js';
import { absoluteUrl } from '../common/http/request-url.js';
import { sendEventStream, type SseFrame } from '../common/http/sse.js';
import { ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiIfMatch, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../common/openapi/docs.js';
import { EVENT_QUERY, STREAM_QUERY, TIMELINE_QUERY, type EventQuery, type StreamQuery, type TimelineQuery } from './timeline-query.js';
import { CreateEventAttributes, UpdateEventAttributes } from './dto/event.dto.js';
import { MAX_EVENT_DATA_BYTES } from './event-data.js';
import { readIdempotencyKey } from '../common/http/idempotency-key.js';
import {
  EVENT_CREATE_REQUEST,
  EVENT_DELETE_REQUEST,
  EVENT_DOCUMENT,
  EVENT_ID,
  EVENT_PAGE,
  EVENT_UPDATE_REQUEST,
  EXAMPLE_EVENT,
  UPDATED_EVENT_DOCUMENT,
} from './event.openapi.js';
import { readLastEventId, type StreamMessage } from './event-streams.js';
import { EventsService } from './events.service.js';

/** How each message of a timeline stream is put on the wire (the frames the OpenAPI description shows). */
export function eventStreamFrame(message: StreamMessage): SseFrame {
  switch (message.type) {
    case 'opened':
      return { retry: message.retryMs, comment: `connected to the timeline of twin ${message.twinId}` };
    case 'heartbeat':
      return { comment: `heartbeat ${message.at.toISOString()}` };
    case 'reset':
      return { event: 'reset', id: message.position, data: JSON.stringify({ position: message.position }) };
    case 'change':
      return { event: message.op, id: message.position, data: message.data };
  }
}

const ERROR_404 = '`not_found`: no event of the `X-Twin` timeline has this id (events of other twins included).';

const STREAM_DESCRIPTION = [
  'Server-sent events (`text/event-stream`) of the `X-Twin` timeline, across all service instances',
  '(PostgreSQL `LISTEN/NOTIFY`; in-process with the embedded database). Each change is one message:',
  '',
  '```',
  'event: created            (or updated, deleted)',
  'id: 1042                  (the change\'s position in the change log)',
  'data: {"type":"events","id":"…","attributes":{"name":…,"category":…,"data":{…},"timestamp":…,"occurred":…}}',
  '```',
  '',
  '`data` is the event resource as committed (for `deleted`: `{"type":"events","id":…}`). When the twin itself',
  'moves (`POST /twins/<TWIN_ID>/positions`, a batch, or a `location` change), `event: twin.moved` carries its',
  'newest position: `{"type":"positions","attributes":{"coordinates":[lon,lat],"occurred":…,"accuracy":…,…},',
  '"relationships":{"twin":{"data":{"type":"twins","id":…}}}}`, one per upload or batch. A position entering or',
  'leaving a geofence is `event: geofence.entered` / `geofence.exited`, its `data` the crossing\'s event. Message ids are',
  'positions in the change log: increasing, in commit order within the timeline. Comment lines',
  '(`: heartbeat …`) keep idle connections open (EVENT_STREAM_HEARTBEAT_MS, 15 s by default); `retry:`',
  'suggests a reconnection delay. Resuming: send `Last-Event-ID: <id of the last message>` (EventSource does',
  'this itself) and every change made since (created, updated, deleted, moved, in order, with the content each',
  'change committed) is sent first, then the live changes, none twice. The log keeps changes for',
  'STREAM_RETENTION_HOURS (24 h by default); a `Last-Event-ID` from before that, or one the log never gave,',
  'opens the stream with `event: reset` (`id:` and `data: {"position":…}` name where it continues): reload',
  'the timeline, then keep the stream. An event id as `Last-Event-ID` resumes after that event\'s creation.',
  '`name` and `category` limit the stream (replay included) to changes of events of that name and/or',
  'category, as the event is after the change (a deletion: as it was; an event renamed away from the filter',
  'is not followed); moves are then left out. Errors before the stream opens (tenant headers, a malformed `Last-Event-ID`, an unknown',
  'parameter) are JSON:API error documents.',
].join('\n');

@ApiTags('events')
@ApiExtraModels(CreateEventAttributes, UpdateEventAttributes)
@ApiTenant({ twin: 'required' })
@ActsAsTwin()
@Controller('events')
export class EventsController {
  constructor(
    private readonly events: EventsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @ApiOperation({
    summary: "Add an event to the X-Twin twin's timeline",
    description: [
      'The service makes the timestamp (its receipt time, microseconds) and, unless the document names one, the id',
      '(a UUIDv7, so ids sort by time). Apps that record offline may send their own id (`data.id`, any UUID;',
      'anything else is a 400, an id already taken — on any timeline — a 409 `id_exists`) and `occurred`, the',
      "device's time of the event. `name` and",
      `\`category\`: 1–255 characters; \`data\`: a JSON object of at most ${MAX_EVENT_DATA_BYTES} bytes serialised as`,
      'compact JSON — larger is a 400 with pointer `/data/attributes/data` (the request as a whole may be up',
      'to the 1 MiB body limit, above which it is a 413). The 201 is sent after the event is committed.',
      '',
      '**Idempotency-Key** (optional, 1–255 printable ASCII characters, scoped to the `X-Twin` twin, kept at',
      'least 24 hours): a retry with the same key and the same attributes answers the first answer again',
      '(201, same id and body, with `Idempotent-Replayed: true`) and stores nothing; the same key with',
      'different attributes is a 422. Concurrent retries with one key still make one event.',
    ].join('\n'),
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
    description: '1–255 printable ASCII characters; makes retries safe.',
  })
  @ApiRequestDocument(EVENT_CREATE_REQUEST.schema, { description: 'An events document.', examples: EVENT_CREATE_REQUEST.examples })
  @ApiDocument(201, EVENT_DOCUMENT, {
    description: '`{data: event}`; `Location` is the event\'s absolute URL. A replay (same `Idempotency-Key`, same attributes) answers the first answer again, with `Idempotent-Replayed: true`.',
    headers: {
      Location: { description: 'Absolute URL of the event', schema: { type: 'string', format: 'uri' } },
      'Idempotent-Replayed': { description: '`true` on a replay; absent otherwise.', schema: { type: 'string', enum: ['true'] } },
    },
  })
  @ApiErrors({
    400: '`invalid_document`: an unknown (`timestamp` included) or invalid attribute, or a `data.id` that is not a UUID (`source.pointer`); `invalid_header`: a tenant header or a malformed `Idempotency-Key`.',
    403: '`forbidden`: a tenant header (`source.header`).',
    409: '`type_mismatch`: `data.type` is not `events`; `id_exists`: an event with the `data.id` exists (`source.pointer` `/data/id`); `conflict`: a request with the same `Idempotency-Key` is still unfinished (retry).',
    422: '`idempotency_key_reused`: the `Idempotency-Key` was used with other attributes (`source.header`).',
  })
  async create(
    @Tenant() tenant: TwinTenant,
    @ResourceBody({ type: 'events', attributes: CreateEventAttributes, id: 'client' }) document: ResourceDocument<CreateEventAttributes>,
    @Headers('idempotency-key') idempotencyKey: string | string[] | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const created = await this.events.create(tenant, document, readIdempotencyKey(idempotencyKey));
    reply.status(201).header('location', absoluteUrl(request, `/events/${created.id}`, this.config.publicUrl));
    if (created.replayed) reply.header('idempotent-replayed', 'true');
    return created.resource;
  }

  @Get()
  @ApiOperation({
    summary: "The X-Twin twin's timeline, newest first",
    description:
      'Ordered by `timestamp` then id, both descending (`sort=timestamp`: both ascending). Filters: `name` and `category` (exact match), `since` (inclusive) and `until` (exclusive), ISO 8601 timestamps (UTC unless an offset is given). Paginated with `page_number`/`page_size` (default 50, max 100; a page past the last is a 404), or by cursor (`page_after`/`page_before`): keyset pages, as fast deep in the timeline as at its start.',
  })
  @ApiQueryParameters(TIMELINE_QUERY)
  @ApiDocument(200, EVENT_PAGE, { description: '`{links, data: [event], meta: {pagination}}`' })
  @ApiErrors(404)
  list(@Tenant() tenant: TwinTenant, @Query(TIMELINE_QUERY) query: TimelineQuery) {
    return this.events.list(tenant, query);
  }

  @Get('stream')
  @ApiOperation({ summary: "Live stream of the X-Twin twin's timeline (server-sent events)", description: STREAM_DESCRIPTION })
  @ApiQueryParameters(STREAM_QUERY)
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    schema: { type: 'string', pattern: '^(?:0|[1-9][0-9]{0,17})$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' },
    description: 'Resume after this message id (a change-log position; an event id stands for its creation): every change since is replayed first, or a `reset` message opens the stream when the log no longer reaches back that far. Malformed: a 400.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: 'An endless `text/event-stream`.',
    content: {
      'text/event-stream': {
        schema: { type: 'string' },
        example: `retry: 2000\n\nevent: created\nid: 1041\ndata: ${JSON.stringify(EXAMPLE_EVENT)}\n\n: heartbeat\n\nevent: deleted\nid: 1042\ndata: {"type":"events","id":"${EVENT_ID}"}\n\n`,
      },
    },
  })
  async stream(
    @Tenant() tenant: TwinTenant,
    @Query(STREAM_QUERY) query: StreamQuery,
    @Headers('last-event-id') lastEventId: string | string[] | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // Refusals (headers, parameters, the listening connection) are thrown here, as JSON:API errors.
    const messages = await this.events.stream(tenant, readLastEventId(lastEventId), { filter: { name: query.name, category: query.category } });
    await sendEventStream(request, reply, messages, eventStreamFrame);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event of the X-Twin timeline', description: 'Events of other twins (even of the same organization) answer 404.' })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiQueryParameters(EVENT_QUERY)
  @ApiDocument(200, EVENT_DOCUMENT, { description: '`{data: event}`' })
  @ApiErrors({ 404: ERROR_404 })
  get(@Tenant() tenant: TwinTenant, @Param('id', UuidParam) id: string, @Query(EVENT_QUERY) query: EventQuery) {
    return this.events.get(tenant, id, query);
  }

  @Patch(':id')
  @ApiIfMatch()
  @ApiOperation({
    summary: 'Change an event of the X-Twin timeline',
    description: [
      '`data.id` is required and must be the id of the URL (409 `id_mismatch` otherwise, as JSON:API prescribes).',
      'Keys of `attributes.data` are merged into the stored data, shallowly: a key with a value replaces the',
      'stored value (objects wholesale), a key set to `null` is removed, keys not named are kept. `name` and',
      `\`category\` may change too. The merged data must still fit ${MAX_EVENT_DATA_BYTES} bytes (400 otherwise).`,
      'The timestamp does not change; `occurred` changes when given (`null` clears it). Events of other twins answer 404.',
    ].join('\n'),
  })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiRequestDocument(EVENT_UPDATE_REQUEST.schema, { description: 'An events document with the changes.', examples: EVENT_UPDATE_REQUEST.examples })
  @ApiDocument(200, UPDATED_EVENT_DOCUMENT, { description: '`{data: event}` after the change' })
  @ApiErrors({
    400: '`invalid_document`: no `data.id`, an unknown or invalid attribute, merged `data` over the size limit (`source.pointer`); `invalid_header`: a tenant header.',
    404: ERROR_404,
    409: '`type_mismatch` (`data.type` is not `events`) or `id_mismatch` (`data.id` is not the path id).',
  })
  update(
    @Tenant() tenant: TwinTenant,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'events', attributes: UpdateEventAttributes, id: 'required' }) document: ResourceDocument<UpdateEventAttributes>,
    @Headers('if-match') ifMatch: string | string[] | undefined,
  ) {
    return this.events.update(tenant, id, document, readIfMatch(ifMatch));
  }

  @Delete(':id')
  @ApiIfMatch()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove an event from the X-Twin timeline',
    description: 'The body `{data: {type: "events", id}}` is optional; an `id` in it that differs from the URL is a 409. Events of other twins answer 404.',
  })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiRequestDocument(EVENT_DELETE_REQUEST.schema, { description: 'Optional.', required: false, examples: EVENT_DELETE_REQUEST.examples })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors({
    400: '`invalid_document`: a malformed document (`source.pointer`); `invalid_header`: a tenant header.',
    404: ERROR_404,
    409: '`type_mismatch` (`data.type` is not `events`) or `id_mismatch` (`data.id` is not the path id).',
  })
  async delete(
    @Tenant() tenant: TwinTenant,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'events', id: 'optional', optional: true }) document: ResourceDocument<unknown> | undefined,
    @Headers('if-match') ifMatch: string | string[] | undefined,
  ): Promise<void> {
    await this.events.delete(tenant, id, document, readIfMatch(ifMatch));
  }
}
