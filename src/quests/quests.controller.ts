import { Controller, Get, Headers, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { readIfMatch } from '../common/http/conditional.js';
import { ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type TwinTenant } from '../common/auth/tenant.js';
import { ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiIfMatch, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../common/openapi/docs.js';
import { ImageLinks } from '../images/image-links.js';
import { CreateQuestAttributes, CreateTaskAttributes, UpdateQuestAttributes } from './dto/quest.dto.js';
import {
  COPY_DOCUMENT,
  CREATED_QUEST_DOCUMENT,
  MY_QUEST_PAGE,
  QUEST_CREATE_REQUEST,
  QUEST_DOCUMENT,
  QUEST_PAGE,
  QUEST_UPDATE_REQUEST,
  TASK_CREATE_REQUEST,
  TASK_DOCUMENT,
  TASK_PAGE,
} from './quest.openapi.js';
import { QuestsService } from './quests.service.js';
import { DISCOVERY_QUERY, MY_QUESTS_QUERY, QUEST_QUERY, TASKS_QUERY, type DiscoveryQuery, type MyQuestsQuery, type QuestQuery, type TasksQuery } from './quest-query.js';

const FULL_FORM =
  'Full form: attributes `created`, `modified`, `name`, `summary`, `description`, `summary-image-url` (absolute URL of ' +
  '`/images/<IMG_ID>/content` or null), `public`, `twin-metadata` (`{id, name, description}` of the creating twin; for a copy, the twin ' +
  'that embarked), `original-twin-metadata` (the same for the original\'s twin, or null), `task-count`, and beyond the contract `price` ' +
  '(a JSON number; exact decimal in storage). Relationships `images` (the images the quest uses, today its summary image, with ' +
  '`meta.count`), `summary-image`, `twin`, `original`.';

const TEXT_FILTERS = 'Filters `name` and `description` match values containing the string, case-insensitively.';

const QUEST_NOT_FOUND = '`not_found`: no quest the `X-Twin` twin can read has this id, or a page past the last one.';
const TYPE_MISMATCH = '`type_mismatch`: `data.type` is not the route\'s type';
const INVALID_DOCUMENT = '`invalid_document`: an unknown or invalid attribute (`source.pointer`); `invalid_header`: a tenant header.';

@ApiTags('quests')
@ApiExtraModels(CreateQuestAttributes, UpdateQuestAttributes, CreateTaskAttributes)
@ActsAsTwin()
@ApiTenant({ twin: 'required' })
@Controller('quests')
export class QuestsController {
  constructor(
    private readonly quests: QuestsService,
    private readonly links: ImageLinks,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Discovery feed',
    description: `Public quests whose creating twin the caller can see (public twins, supplier twins and the twins of the caller's organization), newest first (or as \`sort\` says), paginated by number or by cursor. ${TEXT_FILTERS} ${FULL_FORM}`,
  })
  @ApiQueryParameters(DISCOVERY_QUERY)
  @ApiDocument(200, QUEST_PAGE, { description: '`{links, data: [quest], meta: {pagination}}` (full form)' })
  @ApiErrors({ 404: '`not_found`: a page past the last one.' })
  discover(@Tenant() tenant: TwinTenant, @Query(DISCOVERY_QUERY) query: DiscoveryQuery, @Req() request: FastifyRequest) {
    return this.quests.discover(tenant, query, this.links.imagesBase(request));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a quest',
    description:
      'Created by the `X-Twin` twin, not public. `name` is required (1–255 characters); `summary`, `description`, `summary-image` ' +
      '(an image id of the caller\'s organization from `POST /images/`) and, beyond the contract, `price` (default 0) are optional. ' +
      'The answer has exactly this shape: attributes `created`, `modified`, `name`, `description`, `summary`, `public` ' +
      '(false) and relationships `images` and `summary-image`.',
  })
  @ApiRequestDocument(QUEST_CREATE_REQUEST.schema, { description: 'A quests document.', examples: QUEST_CREATE_REQUEST.examples })
  @ApiDocument(201, CREATED_QUEST_DOCUMENT, { description: '`{data: quest}` (the creation answer)' })
  @ApiErrors({
    400: `${INVALID_DOCUMENT} A \`summary-image\` that is not an image of the caller's organization is a 400 on its pointer.`,
    403: '`client_generated_id`: the document has a `data.id`; `forbidden`: a tenant header (`source.header`).',
    409: `${TYPE_MISMATCH}.`,
  })
  create(@Tenant() tenant: TwinTenant, @ResourceBody({ type: 'quests', attributes: CreateQuestAttributes }) document: ResourceDocument<CreateQuestAttributes>) {
    return this.quests.create(tenant, document);
  }

  @Patch(':questId')
  @ApiIfMatch()
  @ApiOperation({
    summary: 'Change a quest',
    description:
      'Sets any of `public`, `name`, `summary`, `description`, `price` (a number or decimal string ≥ 0 with at most 2 decimals) and ' +
      '`summary-image` (an image id of the caller\'s organization, or null). `data.id` must be the path id (else 409). Only the creating ' +
      'twin may change a quest: another twin that can read the quest (it is in its discovery feed) gets 403, one that cannot gets 404. ' +
      'Once any twin embarked, the quest is started: a change of `name`, `price` or `summary-image` is a 409 (`quest_started`); sending ' +
      `the current value is not a change. Answers 200 with the full form. ${FULL_FORM}`,
  })
  @ApiRequestDocument(QUEST_UPDATE_REQUEST.schema, { description: 'A quests document with the changes.', examples: QUEST_UPDATE_REQUEST.examples })
  @ApiDocument(200, QUEST_DOCUMENT, { description: '`{data: quest}` (full form)' })
  @ApiErrors({
    400: `${INVALID_DOCUMENT} No \`data.id\` is a 400 too.`,
    403: '`forbidden`: the quest is another twin\'s (and readable by this one), or a tenant header (`source.header`).',
    404: '`not_found`: no quest the `X-Twin` twin can read has this id.',
    409: `${TYPE_MISMATCH}; \`id_mismatch\`: \`data.id\` is not the path id; \`quest_started\`: a change of \`name\`, \`price\` or \`summary-image\` once a twin embarked.`,
  })
  update(
    @Tenant() tenant: TwinTenant,
    @Param('questId', UuidParam) questId: string,
    @ResourceBody({ type: 'quests', attributes: UpdateQuestAttributes, id: 'required' }) document: ResourceDocument<UpdateQuestAttributes>,
    @Req() request: FastifyRequest,
    @Headers('if-match') ifMatch: string | string[] | undefined,
  ) {
    return this.quests.update(tenant, questId, document, this.links.forRequest(request), readIfMatch(ifMatch));
  }

  @Post(':questId/embark')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Embark on a quest',
    description:
      'The `X-Twin` twin takes part in a public quest of its discovery feed: in one transaction the service creates a copy owned by that ' +
      'twin (not public, `original` → the quest, with the quest\'s name, texts, summary image, price and a copy of its tasks) and records ' +
      'a revenue entry of the quest\'s `price` for the creating twin. The quest is then started. Embarking again → 409 (`already_embarked`, ' +
      'enforced by a unique constraint, also under concurrent requests); on one\'s own quest or own copy → 409 (`own_quest`); on a copy ' +
      'another twin made public → 409 (`not_an_original`); on a quest that is not public (another twin\'s unpublished copy included), or ' +
      'whose creating twin the caller cannot see → 404. ' +
      'No body. Answers 201 with the copy in the full form.',
  })
  @ApiDocument(201, COPY_DOCUMENT, { description: '`{data: quest}`: the copy, in the full form' })
  @ApiErrors({
    404: '`not_found`: no public quest whose twin the caller can see has this id (other twins\' unpublished copies included).',
    409: '`already_embarked`: the twin embarked on it before; `own_quest`: its own quest or copy; `not_an_original`: a copy another twin made public.',
  })
  embark(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Req() request: FastifyRequest) {
    return this.quests.embark(tenant, questId, this.links.imagesBase(request));
  }

  @Get(':questId/tasks')
  @ApiOperation({
    summary: 'A quest\'s tasks',
    description: 'Ordered by `position`, paginated. Readable for the twin\'s own quests and the quests of its discovery feed; others → 404.',
  })
  @ApiQueryParameters(TASKS_QUERY)
  @ApiDocument(200, TASK_PAGE, { description: '`{links, data: [task], meta: {pagination}}` (with `include=place`, `included`: the places the caller can see)' })
  @ApiErrors({ 404: QUEST_NOT_FOUND })
  listTasks(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Query(TASKS_QUERY) query: TasksQuery) {
    return this.quests.listTasks(tenant, questId, query);
  }

  @Post(':questId/tasks')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add a task to a quest',
    description:
      'Attributes `name` (required, 1–255), `description`, `position` (≥ 0; default after the last task); relationship `place`: a twin ' +
      'the caller can see (else 400 on `/data/relationships/place/data/id`). The place twin\'s `tasks_supplied` counts the task (same ' +
      'transaction). Only the creating twin (else 403, or 404 when it cannot read the quest); 409 (`quest_started`) once a twin embarked.',
  })
  @ApiRequestDocument(TASK_CREATE_REQUEST.schema, { description: 'A tasks document.', examples: TASK_CREATE_REQUEST.examples })
  @ApiDocument(201, TASK_DOCUMENT, { description: '`{data: task}`' })
  @ApiErrors({
    400: `${INVALID_DOCUMENT} A \`place\` the caller cannot see is a 400 on \`/data/relationships/place/data/id\`.`,
    403: '`client_generated_id`: the document has a `data.id`; `forbidden`: the quest is another twin\'s, or a tenant header.',
    404: '`not_found`: no quest the `X-Twin` twin can read has this id.',
    409: `${TYPE_MISMATCH}; \`quest_started\`: a twin embarked on the quest.`,
  })
  createTask(
    @Tenant() tenant: TwinTenant,
    @Param('questId', UuidParam) questId: string,
    @ResourceBody({ type: 'tasks', attributes: CreateTaskAttributes, relationships: ['place'] }) document: ResourceDocument<CreateTaskAttributes>,
  ) {
    return this.quests.createTask(tenant, questId, document);
  }
}

@ApiTags('quests')
@ActsAsTwin()
@ApiTenant({ twin: 'required' })
@Controller('my/quests')
export class MyQuestsController {
  constructor(
    private readonly quests: QuestsService,
    private readonly links: ImageLinks,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'The acting twin\'s quests',
    description:
      `Quests the \`X-Twin\` twin created or embarked on (its copies), newest first, paginated. \`is_original=true\` keeps the quests it created, ` +
      `\`false\` its copies; \`original=<QUEST_ID>\` its copy of that quest; \`owned_by\` the quests whose twin (creator, or for a copy the twin that ` +
      `embarked) is that twin. ${TEXT_FILTERS} ${FULL_FORM}`,
  })
  @ApiQueryParameters(MY_QUESTS_QUERY)
  @ApiDocument(200, MY_QUEST_PAGE, { description: '`{links, data: [quest], meta: {pagination}}` (full form)' })
  @ApiErrors({ 404: '`not_found`: a page past the last one.' })
  list(@Tenant() tenant: TwinTenant, @Query(MY_QUESTS_QUERY) query: MyQuestsQuery, @Req() request: FastifyRequest) {
    return this.quests.listMine(tenant, query, this.links.imagesBase(request));
  }

  @Get(':questId')
  @ApiOperation({ summary: 'One of the acting twin\'s quests', description: `A quest the \`X-Twin\` twin created or its copy; any other → 404. ${FULL_FORM}` })
  @ApiQueryParameters(QUEST_QUERY)
  @ApiDocument(200, QUEST_DOCUMENT, { description: '`{data: quest}` (full form)' })
  @ApiErrors({ 404: '`not_found`: not a quest of the `X-Twin` twin (created by it, or its copy).' })
  get(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Query(QUEST_QUERY) query: QuestQuery, @Req() request: FastifyRequest) {
    return this.quests.getMine(tenant, questId, query, this.links.imagesBase(request));
  }
}
