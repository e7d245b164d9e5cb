import { Controller, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type TwinTenant } from '../common/auth/tenant.js';
import { ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiTenant } from '../common/openapi/docs.js';
import { ImageLinks } from '../images/image-links.js';
import { CreateQuestAttributes, CreateTaskAttributes, UpdateQuestAttributes } from './dto/quest.dto.js';
import { QuestsService } from './quests.service.js';

const QUEST_ID = '6f1c2a7e-2d0b-4f3e-9a51-0c8d7e4b9f10';
const TWIN_ID = '3d9b8c1a-5e4f-4a2b-8c7d-1e0f2a3b4c5d';
const IMAGE_ID = '0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21';

const FULL_QUEST_EXAMPLE = {
  type: 'quests',
  id: QUEST_ID,
  attributes: {
    created: '2026-11-21T19:26:03.123456Z',
    modified: '2026-11-21T19:30:11.654321Z',
    name: 'Old town coffee trail',
    summary: 'Five roasters in one morning.',
    description: 'Start at the market hall, then follow the river.',
    'summary-image-url': `https://api.example.com/images/${IMAGE_ID}/content`,
    public: true,
    price: 4.5,
    'twin-metadata': { id: TWIN_ID, name: 'Ada\'s twin', description: 'Plans city walks.' },
    'original-twin-metadata': null,
    'task-count': 5,
  },
  relationships: {
    images: { data: [{ type: 'images', id: IMAGE_ID }], meta: { count: 1 } },
    'summary-image': { data: { type: 'images', id: IMAGE_ID } },
    twin: { data: { type: 'twins', id: TWIN_ID } },
    original: { data: null },
  },
};

const PAGE_EXAMPLE = {
  links: {
    first: 'https://api.example.com/quests/?page_number=1',
    last: 'https://api.example.com/quests/?page_number=1',
    next: null,
    prev: null,
  },
  data: [FULL_QUEST_EXAMPLE],
  meta: { pagination: { page: 1, pages: 1, count: 1 } },
};

const TASK_EXAMPLE = {
  type: 'tasks',
  id: '9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d',
  attributes: { name: 'Taste the house espresso', description: 'Ask for the single origin.', position: 0, created: '2026-11-21T19:26:03.123456Z', modified: '2026-11-21T19:26:03.123456Z' },
  relationships: { quest: { data: { type: 'quests', id: QUEST_ID } }, place: { data: { type: 'twins', id: TWIN_ID } } },
};

const FULL_FORM =
  'Full form: attributes `created`, `modified`, `name`, `summary`, `description`, `summary-image-url` (absolute URL of ' +
  '`/images/<IMG_ID>/content` or null), `public`, `twin-metadata` (`{id, name, description}` of the creating twin; for a copy, the twin ' +
  'that embarked), `original-twin-metadata` (the same for the original\'s twin, or null), `task-count`, and beyond the contract `price` ' +
  '(a JSON number; exact decimal in storage). Relationships `images` (the images the quest uses, today its summary image, with ' +
  '`meta.count`), `summary-image`, `twin`, `original`.';

const TEXT_FILTERS = 'Filters `name` and `description` match values containing the string, case-insensitively.';

const pageQueries = [
  ApiQuery({ name: 'page_number', required: false, type: Number }),
  ApiQuery({ name: 'page_size', required: false, type: Number, description: 'Default 50, at most 100.' }),
];

/** Applies several decorators (keeps the handler declarations readable). */
const all =
  (...decorators: MethodDecorator[]): MethodDecorator =>
  (target, key, descriptor) => {
    for (const decorator of decorators) decorator(target, key, descriptor);
  };

@ApiTags('quests')
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
    description: `Public quests whose creating twin the caller can see (public twins, supplier twins and the twins of the caller's organization), newest first, paginated. ${TEXT_FILTERS} ${FULL_FORM}`,
  })
  @ApiQuery({ name: 'owned_by', required: false, description: 'Creating twin id.' })
  @ApiQuery({ name: 'name', required: false, description: 'Names containing this (case-insensitive).' })
  @ApiQuery({ name: 'description', required: false, description: 'Descriptions containing this (case-insensitive).' })
  @all(...pageQueries)
  @ApiOkResponse({ description: '`{links, data: [quest], meta: {pagination}}`', schema: { example: PAGE_EXAMPLE } })
  @ApiErrors(404)
  discover(@Tenant() tenant: TwinTenant, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest) {
    return this.quests.discover(tenant, query, this.links.forRequest(request));
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
  @ApiBody({
    schema: {
      example: { data: { type: 'quests', attributes: { name: 'Old town coffee trail', summary: 'Five roasters in one morning.', description: 'Start at the market hall.' } } },
    },
  })
  @ApiCreatedResponse({
    description: '`{data: quest}`',
    schema: {
      example: {
        data: {
          type: 'quests',
          id: QUEST_ID,
          attributes: {
            created: '2026-11-21T19:26:03.123456Z',
            modified: '2026-11-21T19:26:03.123456Z',
            name: 'Old town coffee trail',
            description: 'Start at the market hall.',
            summary: 'Five roasters in one morning.',
            public: false,
          },
          relationships: { images: { data: [], meta: { count: 0 } }, 'summary-image': { data: null } },
        },
      },
    },
  })
  @ApiErrors(409, 413, 415)
  create(@Tenant() tenant: TwinTenant, @ResourceBody({ type: 'quests', attributes: CreateQuestAttributes }) document: ResourceDocument<CreateQuestAttributes>) {
    return this.quests.create(tenant, document);
  }

  @Patch(':questId')
  @ApiOperation({
    summary: 'Change a quest',
    description:
      'Sets any of `public`, `name`, `summary`, `description`, `price` (a number or decimal string ≥ 0 with at most 2 decimals) and ' +
      '`summary-image` (an image id of the caller\'s organization, or null). `data.id` must be the path id (else 409). Only the creating ' +
      'twin may change a quest: another twin that can read the quest (it is in its discovery feed) gets 403, one that cannot gets 404. ' +
      'Once any twin embarked, the quest is started: a change of `name`, `price` or `summary-image` is a 409 (`quest_started`); sending ' +
      `the current value is not a change. Answers 200 with the full form. ${FULL_FORM}`,
  })
  @ApiBody({ schema: { example: { data: { type: 'quests', id: QUEST_ID, attributes: { 'summary-image': IMAGE_ID, public: true, price: '4.50' } } } } })
  @ApiOkResponse({ description: '`{data: quest}`', schema: { example: { data: FULL_QUEST_EXAMPLE } } })
  @ApiErrors(404, 409, 413, 415)
  update(
    @Tenant() tenant: TwinTenant,
    @Param('questId', UuidParam) questId: string,
    @ResourceBody({ type: 'quests', attributes: UpdateQuestAttributes, id: 'required' }) document: ResourceDocument<UpdateQuestAttributes>,
    @Req() request: FastifyRequest,
  ) {
    return this.quests.update(tenant, questId, document, this.links.forRequest(request));
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
      'made by another twin → 409 (`not_an_original`); on a quest that is not public, or whose creating twin the caller cannot see → 404. ' +
      'No body. Answers 201 with the copy in the full form.',
  })
  @ApiCreatedResponse({
    description: '`{data: quest}` (the copy)',
    schema: {
      example: {
        data: {
          ...FULL_QUEST_EXAMPLE,
          id: '1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
          attributes: { ...FULL_QUEST_EXAMPLE.attributes, public: false, 'original-twin-metadata': FULL_QUEST_EXAMPLE.attributes['twin-metadata'] },
          relationships: { ...FULL_QUEST_EXAMPLE.relationships, original: { data: { type: 'quests', id: QUEST_ID } } },
        },
      },
    },
  })
  @ApiErrors(404, 409)
  embark(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Req() request: FastifyRequest) {
    return this.quests.embark(tenant, questId, this.links.forRequest(request));
  }

  @Get(':questId/tasks')
  @ApiOperation({
    summary: 'A quest\'s tasks',
    description: 'Ordered by `position`, paginated. Readable for the twin\'s own quests and the quests of its discovery feed; others → 404.',
  })
  @all(...pageQueries)
  @ApiOkResponse({
    description: '`{links, data: [task], meta: {pagination}}`',
    schema: { example: { ...PAGE_EXAMPLE, data: [TASK_EXAMPLE] } },
  })
  @ApiErrors(404)
  listTasks(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Query() query: Record<string, unknown>) {
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
  @ApiBody({
    schema: {
      example: {
        data: {
          type: 'tasks',
          attributes: { name: 'Taste the house espresso', description: 'Ask for the single origin.', position: 0 },
          relationships: { place: { data: { type: 'twins', id: TWIN_ID } } },
        },
      },
    },
  })
  @ApiCreatedResponse({ description: '`{data: task}`', schema: { example: { data: TASK_EXAMPLE } } })
  @ApiErrors(404, 409, 413, 415)
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
  @ApiQuery({ name: 'is_original', required: false, type: Boolean })
  @ApiQuery({ name: 'original', required: false, description: 'Id of an original quest.' })
  @ApiQuery({ name: 'owned_by', required: false, description: 'Twin id.' })
  @ApiQuery({ name: 'name', required: false })
  @ApiQuery({ name: 'description', required: false })
  @all(...pageQueries)
  @ApiOkResponse({ description: '`{links, data: [quest], meta: {pagination}}`', schema: { example: PAGE_EXAMPLE } })
  @ApiErrors(404)
  list(@Tenant() tenant: TwinTenant, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest) {
    return this.quests.listMine(tenant, query, this.links.forRequest(request));
  }

  @Get(':questId')
  @ApiOperation({ summary: 'One of the acting twin\'s quests', description: `A quest the \`X-Twin\` twin created or its copy; any other → 404. ${FULL_FORM}` })
  @ApiOkResponse({ description: '`{data: quest}`', schema: { example: { data: FULL_QUEST_EXAMPLE } } })
  @ApiErrors(404)
  get(@Tenant() tenant: TwinTenant, @Param('questId', UuidParam) questId: string, @Req() request: FastifyRequest) {
    return this.quests.getMine(tenant, questId, this.links.forRequest(request));
  }
}
