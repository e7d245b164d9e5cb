import { Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type TwinTenant } from '../common/auth/tenant.js';
import { absoluteUrl } from '../common/http/request-url.js';
import { ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiTenant } from '../common/openapi/docs.js';
import { CreateEventAttributes, UpdateEventAttributes } from './dto/event.dto.js';
import { MAX_EVENT_DATA_BYTES, readIdempotencyKey } from './event-data.js';
import { EventsService } from './events.service.js';

const EVENT_ID = '0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10';
const EXAMPLE_EVENT = {
  type: 'events',
  id: EVENT_ID,
  attributes: { name: 'walk', category: 'activity', data: { steps: 4200, device: 'watch' }, timestamp: '2026-11-21T19:26:03.123456Z' },
};
const example = (value: unknown) => ({ 'application/vnd.api+json': { example: value } });

const STREAM_DESCRIPTION = [
  'Server-sent events (`text/event-stream`) of the `X-Twin` timeline, across all service instances',
  '(PostgreSQL `LISTEN/NOTIFY`; in-process with the embedded database). Each change is one message:',
  '',
  '```',
  'event: created            (or updated, deleted)',
  `id: ${EVENT_ID}`,
  'data: {"type":"events","id":"…","attributes":{"name":…,"category":…,"data":{…},"timestamp":…}}',
  '```',
  '',
  '`data` is the event resource as committed (for `deleted`: `{"type":"events","id":…}`). Comment lines',
  '(`: heartbeat …`) keep idle connections open (EVENT_STREAM_HEARTBEAT_MS, 15 s by default); `retry:`',
  'suggests a reconnection delay. Resuming: send `Last-Event-ID: <EVENT_ID>` (EventSource does this itself)',
  'and the stored events of the timeline created after that id (UUIDv7 ids sort by creation time) are',
  'sent first, as `created` messages with their current content, then the live changes. Updates and',
  'deletions that happened while disconnected are not replayed. Errors before the stream opens',
  '(tenant headers, a malformed `Last-Event-ID`) are JSON:API error documents.',
].join('\n');

@ApiTags('events')
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
      'The service makes the id (a UUIDv7, so ids sort by time) and the timestamp (microseconds). `name` and',
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
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1–255 printable ASCII characters; makes retries safe.' })
  @ApiBody({
    type: CreateEventAttributes,
    description: '`{data: {type: "events", attributes: {name, category, data}}}`',
    examples: { event: { value: { data: { type: 'events', attributes: EXAMPLE_EVENT.attributes } } } },
  })
  @ApiCreatedResponse({
    description: '`{data: event}`; `Location` is the event\'s absolute URL.',
    headers: { Location: { description: 'Absolute URL of the event', schema: { type: 'string' } } },
    content: example({ data: EXAMPLE_EVENT }),
  })
  @ApiErrors(409, 413, 415, 422)
  async create(
    @Tenant() tenant: TwinTenant,
    @ResourceBody({ type: 'events', attributes: CreateEventAttributes }) document: ResourceDocument<CreateEventAttributes>,
    @Headers('idempotency-key') idempotencyKey: string | string[] | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const created = await this.events.create(tenant, document.attributes, readIdempotencyKey(idempotencyKey));
    reply.status(201).header('location', absoluteUrl(request, `/events/${created.resource.id}`, this.config.publicUrl));
    if (created.replayed) reply.header('idempotent-replayed', 'true');
    return created.resource;
  }

  @Get()
  @ApiOperation({
    summary: "The X-Twin twin's timeline, newest first",
    description:
      'Ordered by `timestamp` then id, both descending. Filters: `name` and `category` (exact match), `since` (inclusive) and `until` (exclusive), ISO 8601 timestamps (UTC unless an offset is given). Paginated with `page_number`/`page_size` (default 50, max 100); a page past the last is a 404.',
  })
  @ApiQuery({ name: 'name', required: false, type: String })
  @ApiQuery({ name: 'category', required: false, type: String })
  @ApiQuery({ name: 'since', required: false, type: String, example: '2026-11-21T00:00:00Z' })
  @ApiQuery({ name: 'until', required: false, type: String, example: '2026-11-22T00:00:00.000000Z' })
  @ApiQuery({ name: 'page_number', required: false, type: Number })
  @ApiQuery({ name: 'page_size', required: false, type: Number })
  @ApiOkResponse({
    description: '`{links, data: [event], meta: {pagination}}`',
    content: example({
      links: { first: 'https://api.example.com/events/?page_number=1', last: 'https://api.example.com/events/?page_number=1', next: null, prev: null },
      data: [EXAMPLE_EVENT],
      meta: { pagination: { page: 1, pages: 1, count: 1 } },
    }),
  })
  @ApiErrors(404)
  list(@Tenant() tenant: TwinTenant, @Query() query: Record<string, unknown>) {
    return this.events.list(tenant, query);
  }

  @Get('stream')
  @ApiOperation({ summary: "Live stream of the X-Twin twin's timeline (server-sent events)", description: STREAM_DESCRIPTION })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume after this event id (replays stored events created after it).' })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: 'An endless `text/event-stream`.',
    content: {
      'text/event-stream': {
        schema: { type: 'string' },
        example: `retry: 2000\n\nevent: created\nid: ${EVENT_ID}\ndata: ${JSON.stringify(EXAMPLE_EVENT)}\n\n: heartbeat\n\nevent: deleted\nid: ${EVENT_ID}\ndata: {"type":"events","id":"${EVENT_ID}"}\n\n`,
      },
    },
  })
  @ApiErrors()
  async stream(
    @Tenant() tenant: TwinTenant,
    @Query() query: Record<string, unknown>,
    @Headers('last-event-id') lastEventId: string | string[] | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.events.stream(tenant, query, lastEventId, request, reply);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event of the X-Twin timeline', description: 'Events of other twins (even of the same organization) answer 404.' })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiOkResponse({ description: '`{data: event}`', content: example({ data: EXAMPLE_EVENT }) })
  @ApiErrors(404)
  get(@Tenant() tenant: TwinTenant, @Param('id', UuidParam) id: string) {
    return this.events.get(tenant, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change an event of the X-Twin timeline',
    description: [
      '`data.id` is required and must be the id of the URL (409 `id_mismatch` otherwise, as JSON:API prescribes).',
      'Keys of `attributes.data` are merged into the stored data, shallowly: a key with a value replaces the',
      'stored value (objects wholesale), a key set to `null` is removed, keys not named are kept. `name` and',
      `\`category\` may change too. The merged data must still fit ${MAX_EVENT_DATA_BYTES} bytes (400 otherwise).`,
      'The timestamp does not change. Events of other twins answer 404.',
    ].join('\n'),
  })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiBody({
    type: UpdateEventAttributes,
    examples: { merge: { value: { data: { type: 'events', id: EVENT_ID, attributes: { data: { steps: 5000, device: null } } } } } },
  })
  @ApiOkResponse({ description: '`{data: event}` after the change', content: example({ data: { ...EXAMPLE_EVENT, attributes: { ...EXAMPLE_EVENT.attributes, data: { steps: 5000 } } } }) })
  @ApiErrors(404, 409, 413, 415)
  update(
    @Tenant() tenant: TwinTenant,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'events', attributes: UpdateEventAttributes, id: 'required' }) document: ResourceDocument<UpdateEventAttributes>,
  ) {
    return this.events.update(tenant, id, document);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove an event from the X-Twin timeline',
    description: 'The body `{data: {type: "events", id}}` is optional; an `id` in it that differs from the URL is a 409. Events of other twins answer 404.',
  })
  @ApiParam({ name: 'id', example: EVENT_ID })
  @ApiBody({ required: false, examples: { contract: { value: { data: { type: 'events', id: EVENT_ID } } } } })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors(404, 409, 415)
  async delete(
    @Tenant() tenant: TwinTenant,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'events', id: 'optional', optional: true }) document: ResourceDocument<unknown> | undefined,
  ): Promise<void> {
    await this.events.delete(tenant, id, document);
  }
}
