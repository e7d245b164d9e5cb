/**
 * The OpenAPI description of the quest and task routes (docs/API.md, section 12): the quest's two forms
 * (the creation answer and the full form), the task, their documents and the request examples. The forms
 * are what quest.resource.ts makes of sample rows.
 */
import { getSchemaPath, type SchemaObject } from '@nestjs/swagger';
import { EXAMPLE_IDS, OTHER_EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import {
  pageDocument,
  requestDocument,
  resourceForms,
  singleDocument,
  TIMESTAMP,
  toMany,
  toOne,
  toOneRequest,
  URL_SCHEMA,
  UUID,
} from '../common/openapi/schemas.js';
import { exampleImageUrl } from '../images/image.openapi.js';
import { CreateQuestAttributes, CreateTaskAttributes, UpdateQuestAttributes } from './dto/quest.dto.js';
import { createdQuestResource, questResource, taskResource } from './quest.resource.js';
import type { QuestRow, TaskRow } from './quest.resource.js';

export const QUEST_ID = EXAMPLE_IDS.quests;
const TWIN_ID = EXAMPLE_IDS.twins;
const IMAGE_ID = EXAMPLE_IDS.images;

const SAMPLE_QUEST: QuestRow = {
  id: QUEST_ID,
  organization_id: EXAMPLE_IDS.organizations,
  twin_id: TWIN_ID,
  name: 'Old town coffee trail',
  summary: 'Five roasters in one morning.',
  description: 'Start at the market hall, then follow the river.',
  summary_image_id: IMAGE_ID,
  public: true,
  original_id: null,
  price: '4.50',
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:30:11.654321Z',
  twin_name: "Ada's twin",
  twin_description: 'Plans city walks.',
  original_twin_id: null,
  original_twin_name: null,
  original_twin_description: null,
  task_count: 5,
};

/** What embarking made of SAMPLE_QUEST for another twin. */
const SAMPLE_COPY: QuestRow = {
  ...SAMPLE_QUEST,
  id: OTHER_EXAMPLE_IDS.quest,
  twin_id: OTHER_EXAMPLE_IDS.twin,
  twin_name: "Bob's twin",
  twin_description: 'Likes coffee.',
  public: false,
  original_id: QUEST_ID,
  original_twin_id: TWIN_ID,
  original_twin_name: SAMPLE_QUEST.twin_name,
  original_twin_description: SAMPLE_QUEST.twin_description,
};

const SAMPLE_TASK: TaskRow = {
  id: EXAMPLE_IDS.tasks,
  quest_id: QUEST_ID,
  name: 'Taste the house espresso',
  description: 'Ask for the single origin.',
  position: 0,
  place_twin_id: TWIN_ID,
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:26:03.123456Z',
};

const twinMetadata = (nullable: boolean, description: string): SchemaObject => ({
  type: 'object',
  ...(nullable ? { nullable: true } : {}),
  description,
  required: ['id', 'name', 'description'],
  properties: { id: UUID, name: { type: 'string' }, description: { type: 'string' } },
  additionalProperties: false,
});

const created = createdQuestResource({ ...SAMPLE_QUEST, public: false });
const full = questResource(SAMPLE_QUEST, exampleImageUrl);
const copy = questResource(SAMPLE_COPY, exampleImageUrl);
const task = taskResource(SAMPLE_TASK);

const QUESTS = resourceForms({
  type: 'quests',
  attributes: {
    created: TIMESTAMP,
    modified: TIMESTAMP,
    name: { type: 'string', minLength: 1, maxLength: 255 },
    summary: { type: 'string', description: '"" when none.' },
    description: { type: 'string', description: '"" when none.' },
    'summary-image-url': { ...URL_SCHEMA, nullable: true, description: 'The absolute URL of the summary image\'s bytes, or null.' },
    public: { type: 'boolean', description: 'On the discovery feed.' },
    price: { type: 'number', minimum: 0, description: 'What an embarking twin pays (exact decimal in storage, at most 2 decimals).' },
    'twin-metadata': twinMetadata(false, 'The quest\'s twin: its creator, or for a copy the twin that embarked.'),
    'original-twin-metadata': twinMetadata(true, 'The original\'s twin, for a copy; null otherwise.'),
    'task-count': { type: 'integer', minimum: 0 },
  },
  relationships: {
    images: toMany('images', { counted: true, description: 'The images the quest uses (today: its summary image).' }),
    'summary-image': toOne('images', true),
    twin: toOne('twins'),
    original: toOne('quests', true, 'For a copy, the quest it was made from.'),
  },
  forms: {
    CreatedQuestResource: { sample: created, description: 'The answer of `POST /quests/` (a smaller form than the full one).' },
    QuestResource: { sample: full, description: 'A quest in the full form (lists, `GET /my/quests/<QUEST_ID>`, PATCH and embark answers).' },
  },
});

const TASKS = resourceForms({
  type: 'tasks',
  attributes: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    description: { type: 'string', description: '"" when none.' },
    position: { type: 'integer', minimum: 0, description: 'Order within the quest.' },
    created: TIMESTAMP,
    modified: TIMESTAMP,
  },
  relationships: { quest: toOne('quests'), place: toOne('twins', true, 'The twin where the task takes place, or null.') },
  forms: { TaskResource: { sample: task, description: 'A task of a quest.' } },
});

export const CREATED_QUEST_DOCUMENT = singleDocument('CreatedQuestDocument', QUESTS.CreatedQuestResource, created);
export const QUEST_DOCUMENT = singleDocument('QuestDocument', QUESTS.QuestResource, full);
export const COPY_DOCUMENT = { ...QUEST_DOCUMENT, example: { data: copy } };
export const QUEST_PAGE = pageDocument('QuestListDocument', QUESTS.QuestResource, { path: '/quests/', items: [full] });
export const MY_QUEST_PAGE = pageDocument('QuestListDocument', QUESTS.QuestResource, { path: '/my/quests/', items: [full, copy] });
export const TASK_DOCUMENT = singleDocument('TaskDocument', TASKS.TaskResource, task);
export const TASK_PAGE = pageDocument('TaskListDocument', TASKS.TaskResource, { path: `/quests/${QUEST_ID}/tasks/`, items: [task] });

export const QUEST_CREATE_REQUEST = {
  schema: requestDocument('QuestCreateDocument', {
    type: 'quests',
    description: '`{data: {type: "quests", attributes}}`; only `name` is required.',
    attributes: { $ref: getSchemaPath(CreateQuestAttributes) },
    attributesRequired: true,
    id: 'forbidden',
  }),
  examples: {
    quest: {
      summary: 'A quest with a summary image and a price',
      value: {
        data: {
          type: 'quests',
          attributes: {
            name: 'Old town coffee trail',
            summary: 'Five roasters in one morning.',
            description: 'Start at the market hall.',
            'summary-image': IMAGE_ID,
            price: '0.10',
          },
        },
      },
    },
    minimal: { summary: 'Only the name', value: { data: { type: 'quests', attributes: { name: 'Old town coffee trail' } } } },
  },
};

export const QUEST_UPDATE_REQUEST = {
  schema: requestDocument('QuestUpdateDocument', {
    type: 'quests',
    description: '`{data: {type: "quests", id, attributes}}`: `id` is required and must be the path id; only the given attributes change.',
    attributes: { $ref: getSchemaPath(UpdateQuestAttributes) },
    id: 'required',
  }),
  examples: {
    publish: { summary: 'Publish with a summary image and a price', value: { data: { type: 'quests', id: QUEST_ID, attributes: { 'summary-image': IMAGE_ID, public: true, price: '4.50' } } } },
    unpublish: { summary: 'Take off the feed, remove the summary image', value: { data: { type: 'quests', id: QUEST_ID, attributes: { public: false, 'summary-image': null } } } },
  },
};

export const TASK_CREATE_REQUEST = {
  schema: requestDocument('TaskCreateDocument', {
    type: 'tasks',
    description: '`{data: {type: "tasks", attributes, relationships?: {place}}}`.',
    attributes: { $ref: getSchemaPath(CreateTaskAttributes) },
    attributesRequired: true,
    id: 'forbidden',
    relationships: { place: toOneRequest('twins', 'A twin the caller can see (else 400 on `/data/relationships/place/data/id`), or null.') },
  }),
  examples: {
    task: {
      summary: 'A task at a place',
      value: {
        data: {
          type: 'tasks',
          attributes: { name: 'Taste the house espresso', description: 'Ask for the single origin.', position: 0 },
          relationships: { place: { data: { type: 'twins', id: TWIN_ID } } },
        },
      },
    },
  },
};
