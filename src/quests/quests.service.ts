import { Inject, Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { ChangeLog } from '../database/change-log.js';
import { anyCause } from '../database/driver-errors.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import { conflict, forbidden, invalidDocument, notFound, preconditionFailed } from '../common/json-api/api-error.js';
import { Tagged, versionedRead, type Conditional } from '../common/json-api/envelope.js';
import { cursorPageOfJson, cursorRequest, cursorScope, CursorCodec, type CursorPage } from '../common/json-api/cursor.js';
import { isCursorPaging, type Page, pageOfJson, pageRequest, type PageParams } from '../common/json-api/pagination.js';
import { representationVariant, type SortDirective } from '../common/json-api/representation.js';
import { assertIdMatchesPath, readToOne, type ResourceDocument } from '../common/json-api/resource-body.js';
import { JsonText, type ResourceObject, type Precondition } from '../common/json-api/resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ImageUrl } from '../images/image-links.js';
import { ImagesRepository } from '../images/images.repository.js';
import type { CreateQuestAttributes, CreateTaskAttributes, UpdateQuestAttributes } from './dto/quest.dto.js';
import { canonicalPrice } from '../common/money.js';
import { createdQuestResource, questResource, taskResource } from './quest.resource.js';
import { type LockedQuest, type MyQuestFilters, type QuestChanges, type QuestDocument, type QuestList, QuestsRepository } from './quests.repository.js';
import type { DiscoveryQuery, MyQuestsQuery, QuestQuery, TasksQuery } from './quest-query.js';


const SUMMARY_IMAGE = '/data/attributes/summary-image';

/** The quest lists' own order (cursor scopes name it). */
const NEWEST_FIRST: readonly SortDirective[] = [{ key: 'created', descending: true }];

/** SQLSTATE 23505 on the given constraint, however TypeORM wrapped the driver error. */
const isUniqueViolation = (error: unknown, constraint: string): boolean =>
  anyCause(error, (failure) => failure.code === '23505' && failure.constraint === constraint);

/**
 * Quests, tasks and embarking (docs/API.md, section 12). Rules this service owns:
 * - only the creating twin changes a quest or adds tasks (another twin that can read the quest: 403;
 *   one that cannot: 404);
 * - once any twin embarked, the quest is started: changing `name`, `price`, `summary-image` or its
 *   tasks is a 409 (`quest_started`);
 * - an embark (copy + copied tasks + revenue entry) is one statement; a second one by the same twin
 *   hits the unique constraint and is a 409 (`already_embarked`).
 */
@Injectable()
export class QuestsService {
  constructor(
    private readonly sql: Sql,
    private readonly quests: QuestsRepository,
    private readonly images: ImagesRepository,
    private readonly cursors: CursorCodec,
    private readonly changeLog: ChangeLog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private pageRequest(params: PageParams) {
    return pageRequest(params, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
  }

  /** `GET /quests/`; `imagesBase`: the absolute URL of `/images/` (ImageLinks.imagesBase). */
  discover(tenant: TwinTenant, { page, fields, include, sort, ...filters }: DiscoveryQuery, imagesBase: string): Promise<Page<JsonText> | CursorPage> {
    return this.list('discovery', tenant, filters, page, { imagesBase, fields, include, sort });
  }

  /** `GET /my/quests/` */
  listMine(tenant: TwinTenant, { page, fields, include, sort, ...filters }: MyQuestsQuery, imagesBase: string): Promise<Page<JsonText> | CursorPage> {
    return this.list('mine', tenant, filters, page, { imagesBase, fields, include, sort });
  }

  /** A page of a quest list, numbered or keyset. */
  private async list(list: QuestList, tenant: TwinTenant, filters: MyQuestFilters, params: PageParams, document: QuestDocument): Promise<Page<JsonText> | CursorPage> {
    if (isCursorPaging(params)) {
      const limits = { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax };
      const request = cursorRequest(params, limits, this.cursors, cursorScope(`quests-${list}`, document.sort ?? NEWEST_FIRST));
      return cursorPageOfJson(request, await this.quests.keysetPage(list, tenant, filters, request, document), this.cursors);
    }
    const page = this.pageRequest(params);
    return pageOfJson(page, await this.quests.page(list, tenant, filters, page, document));
  }

  /**
   * `GET /my/quests/<QUEST_ID>`, tagged with the quest's version (a conditional GET reads only the
   * version); with `include`, tagged by its body (the included resources have versions of their own).
   */
  getMine(tenant: TwinTenant, id: string, { fields, include }: QuestQuery, imagesBase: string): Conditional<JsonText> | Promise<JsonText> {
    return versionedRead({
      variant: representationVariant(fields),
      includes: include.size > 0,
      version: () => this.quests.mineVersion(tenant, id),
      build: async () => {
        const quest = await this.quests.findMineJson(tenant, id, { imagesBase, fields, include });
        if (!quest) throw notFound('No such quest among the acting twin\'s quests.');
        return { value: new JsonText(quest.data, quest.included ?? undefined), version: quest.version };
      },
    });
  }


  async create(tenant: TwinTenant, document: ResourceDocument<CreateQuestAttributes>): Promise<ResourceObject> {
    const attributes = document.attributes;
    const summaryImageId = attributes['summary-image']?.toLowerCase() ?? null;
    const row = await this.sql.transaction(async () => {
      if (summaryImageId) await this.assertOwnImage(tenant, summaryImageId);
      const id = await this.quests.insert(
        tenant,
        {
          name: attributes.name,
          summary: attributes.summary ?? '',
          description: attributes.description ?? '',
          summaryImageId,
          price: attributes.price === undefined ? '0.00' : canonicalPrice(attributes.price)!,
        },
      );
      return this.quests.findMine(tenant, id);
    });
    return createdQuestResource(row!);
  }

  async update(
    tenant: TwinTenant,
    id: string,
    document: ResourceDocument<UpdateQuestAttributes>,
    url: ImageUrl,
    precondition?: Precondition,
  ): Promise<Tagged<ResourceObject>> {
    assertIdMatchesPath(document.id, id);
    const attributes = document.attributes;
    const changes: QuestChanges = {
      name: attributes.name,
      summary: attributes.summary,
      description: attributes.description,
      public: attributes.public,
      price: attributes.price === undefined ? undefined : canonicalPrice(attributes.price)!,
      summaryImageId: document.present.has('summary-image') ? (attributes['summary-image']?.toLowerCase() ?? null) : undefined,
    };
    const row = await this.sql.transaction(async () => {
      const quest = await this.lockForChange(tenant, id);
      // If-Match is judged under the row lock: no change can come between the check and this one.
      if (precondition && !precondition.any && !precondition.versions.includes(quest.version)) throw preconditionFailed();
      const frozen = this.frozenChanges(quest, changes);
      if (frozen.length > 0 && (await this.quests.isStarted(id))) {
        throw conflict(
          `The quest has started (a twin embarked on it): ${frozen.join(', ')} can no longer change.`,
          { pointer: `/data/attributes/${frozen[0]}` },
          'quest_started',
        );
      }
      if (changes.summaryImageId) await this.assertOwnImage(tenant, changes.summaryImageId);
      await this.quests.update(tenant, id, changes);
      const updated = (await this.quests.findMine(tenant, id))!;
      const resource = questResource(updated, url);
      // Made public: the quest enters the discovery feed (webhook `quest.published`), recorded as answered.
      if (changes.public === true && !quest.public) await this.recordChange('quest.published', tenant, resource);
      return { resource, version: updated.version! };
    });
    return Tagged.ofVersion(row.resource, row.version);
  }

  /** Attribute names whose change a started quest refuses, among those this PATCH really changes. */
  private frozenChanges(quest: LockedQuest, changes: QuestChanges): string[] {
    const frozen: string[] = [];
    if (changes.name !== undefined && changes.name !== quest.name) frozen.push('name');
    if (changes.price !== undefined && changes.price !== quest.price) frozen.push('price');
    if (changes.summaryImageId !== undefined && changes.summaryImageId !== quest.summary_image_id) frozen.push('summary-image');
    return frozen;
  }

  /**
   * Embarks in one statement, which also records the copy in the change log (webhook `quest.embarked`)
   * and answers that recorded full form: `imagesBase` (ImageLinks.imagesBase) is what its image URLs
   * start with.
   */
  async embark(tenant: TwinTenant, id: string, imagesBase: string): Promise<JsonText> {
    try {
      const outcome = await this.quests.embark(tenant, id, imagesBase);
      if (!outcome || !outcome.readable) throw notFound('No such quest in the discovery feed.');
      if (outcome.mine) throw conflict('A twin cannot embark on its own quest (or on its own copy).', undefined, 'own_quest');
      if (outcome.is_copy) throw conflict('This quest is a copy; embark on its original.', undefined, 'not_an_original');
      return new JsonText(outcome.copy!);
    } catch (error) {
      if (isUniqueViolation(error, 'quests_embark_unique')) {
        throw conflict('The acting twin has already embarked on this quest.', undefined, 'already_embarked');
      }
      throw error;
    }
  }

  async listTasks(tenant: TwinTenant, questId: string, { page: pageParams, fields, include }: TasksQuery): Promise<Page<JsonText>> {
    const page = this.pageRequest(pageParams);
    if (!(await this.quests.isReadable(tenant, questId))) throw notFound('No such quest.');
    return pageOfJson(page, await this.quests.pageTasks(tenant, questId, page, { fields, include }));
  }

  async createTask(tenant: TwinTenant, questId: string, document: ResourceDocument<CreateTaskAttributes>): Promise<ResourceObject> {
    const placeId = readToOne(document, 'place', 'twins') ?? null;
    const row = await this.sql.transaction(async () => {
      await this.lockForChange(tenant, questId);
      if (await this.quests.isStarted(questId)) {
        throw conflict('The quest has started (a twin embarked on it): its tasks can no longer change.', undefined, 'quest_started');
      }
      if (placeId && !(await this.quests.twinVisible(tenant, placeId))) {
        throw invalidDocument('No such twin visible to the caller.', '/data/relationships/place/data/id');
      }
      return this.quests.insertTask(
        tenant,
        questId,
        { name: document.attributes.name, description: document.attributes.description ?? '', position: document.attributes.position, placeTwinId: placeId },
      );
    });
    return taskResource(row);
  }

  private recordChange(kind: 'quest.published', tenant: TwinTenant, resource: ResourceObject): Promise<void> {
    return this.changeLog.record({ kind, organizationId: tenant.organization.id, twinId: tenant.twin.id, subjectId: resource.id, resource: JSON.stringify(resource) });
  }

  /** Locks a quest the acting twin created: 404 when it cannot read it, 403 when it is someone else's. */
  private async lockForChange(tenant: TwinTenant, id: string): Promise<LockedQuest> {
    const quest = await this.quests.lock(tenant, id);
    if (!quest || !quest.readable) throw notFound('No such quest.');
    if (!quest.mine) throw forbidden('Only the twin that created the quest may change it.');
    return quest;
  }

  private async assertOwnImage(tenant: TwinTenant, imageId: string): Promise<void> {
    if (!(await this.images.ownedBy(tenant, imageId))) {
      throw invalidDocument('No such image in the caller\'s organization; upload it with POST /images/ first.', SUMMARY_IMAGE);
    }
  }
}
