import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { ConcurrencyLimit } from '../common/concurrency.js';
import { idExists, invalidDocument, invalidParameter, notFound, preconditionFailed } from '../common/json-api/api-error.js';
import { FeaturePage, Tagged, versionedRead, type Conditional } from '../common/json-api/envelope.js';
import { cursorPageOfJson, cursorRequest, cursorScope, CursorCodec, type CursorPage } from '../common/json-api/cursor.js';
import { assertPageExists, isCursorPaging, Page, pageOfJson, pageRequest, type PageParams } from '../common/json-api/pagination.js';
import { representationVariant, type Representation } from '../common/json-api/representation.js';
import { assertIdMatchesPath, type ResourceDocument } from '../common/json-api/resource-body.js';
import { JsonText, type Precondition } from '../common/json-api/resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { TwinAttributes } from './dto/twin-attributes.dto.js';
import type { OwnTwinListQuery, TwinDetailQuery, TwinFilters, TwinListQuery } from './twin-filters.js';
import { readLocation } from './twin-geo.js';
import { connectionTwinId } from './twin-conditions.js';
import { TwinsRepository, type TwinChanges, type TwinDocument, type TwinQuery, type WrittenTwin } from './twins.repository.js';
import { PositionsService } from './positions/positions.service.js';

const ATTRIBUTES = '/data/attributes';

/**
 * Geo features being listed at once, per instance (a listing costs its page size: 1,000 by default,
 * up to 10,000). A listing is megabytes of JSON built by PostgreSQL and held while it is read and sent:
 * unbounded, 50 concurrent callers held hundreds of megabytes and queued past the pool's connection
 * timeout (503s), for no more throughput than the database's cores give (issue 6). Callers over the
 * budget wait here, holding neither a connection nor a result. Three 10,000-feature pages at once, not
 * two: with two, Node and PostgreSQL took turns more than they overlapped (geo ~10k, two runs of each on two
 * cores: 0.84-0.95 of the hand-written server with 20,000, 0.88-1.29 with 30,000, at a like peak RSS).
 */
const GEO_FEATURES_AT_ONCE = 30_000;

/** Request attribute (dasherized, as on the wire) → column, for the attributes copied as they are. */
const PLAIN_ATTRIBUTES = {
  name: 'name',
  description: 'description',
  public: 'public',
  personal: 'personal',
  connections: 'connections',
  tags: 'tags',
  'meta-data': 'meta_data',
  'opening-hours': 'opening_hours',
  'phone-number': 'phone_number',
  address: 'address',
  city: 'city',
  state: 'state',
  website: 'website',
} as const satisfies Partial<Record<keyof TwinAttributes, keyof TwinChanges>>;

@Injectable()
export class TwinsService {
  private readonly geoListings = new ConcurrencyLimit(GEO_FEATURES_AT_ONCE);

  constructor(
    private readonly twins: TwinsRepository,
    private readonly positions: PositionsService,
    private readonly cursors: CursorCodec,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `GET /twins/`: visible twins, filtered, one page (numbered or keyset). */
  async list(tenant: Tenant, { page: pageParams, fields, include, sort, ...filters }: TwinListQuery): Promise<Page<JsonText> | CursorPage> {
    const twinQuery = withSort(await this.resolve(tenant, filters), sort);
    return this.page(tenant, 'twins', twinQuery, pageParams, { form: 'list', fields, includeOrganization: include.has('organization') });
  }

  /** `GET /my/twins/`: the caller's organization's twins, one page (numbered or keyset). */
  async listOwn(tenant: Tenant, { page: pageParams, fields, include, sort, ...filters }: OwnTwinListQuery): Promise<Page<JsonText> | CursorPage> {
    const twinQuery = withSort({ ...filters, own: true }, sort);
    return this.page(tenant, 'my-twins', twinQuery, pageParams, { form: 'own', fields, includeOrganization: include.has('organization') });
  }

  private async page(tenant: Tenant, list: string, query: TwinQuery, params: PageParams, document: TwinDocument): Promise<Page<JsonText> | CursorPage> {
    const limits = { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax };
    if (isCursorPaging(params)) {
      // The order a cursor continues: `sort`, or the list's own order (which personality and ordering change).
      const order = `${list}${query.personality ? '+personality' : ''}${query.ordering ? '+distance' : ''}`;
      const request = cursorRequest(params, limits, this.cursors, cursorScope(order, query.sort ?? []));
      return cursorPageOfJson(request, await this.twins.keysetPage(tenant, query, request, document), this.cursors);
    }
    const page = pageRequest(params, limits);
    const counted = await this.twins.page(tenant, query, page, document);
    return pageOfJson(page, counted);
  }

  /**
   * `GET /twins/` as `application/geo+json`: `{links, data: {results: FeatureCollection, meta, links}, meta}`.
   * The FeatureCollection is JSON text made by PostgreSQL and spliced in unparsed; `data.meta` and
   * `data.links` repeat the page's pagination meta and links. Twins without a location are not counted.
   */
  async geoList(tenant: Tenant, { page: pageParams, fields, include, sort, ...filters }: TwinListQuery): Promise<FeaturePage> {
    if (isCursorPaging(pageParams)) throw invalidParameter(pageParams.after !== undefined ? 'page_after' : 'page_before', 'The map listing (application/geo+json) is paged by page_number.');
    const parameter = include.size > 0 ? 'include' : Object.keys(fields).map((type) => `fields[${type}]`)[0];
    if (parameter) throw invalidParameter(parameter, `${parameter} applies to JSON:API documents, not to the map listing (application/geo+json).`);
    const twinQuery = withSort(await this.resolve(tenant, filters), sort);
    const request = pageRequest(pageParams, { defaultSize: this.config.geoPageSizeDefault, maxSize: this.config.geoPageSizeMax });
    const { count, data: features } = await this.geoListings.run(request.size, () => this.twins.featureCollection(tenant, twinQuery, request));
    assertPageExists(request, count);
    return new FeaturePage(features, new Page(undefined, request, count));
  }

  /**
   * `GET /twins/<TWIN_ID>/`, tagged with the twin's version (a conditional GET reads only the version).
   * With `include`, the document also shows the organization: it is tagged by its body instead.
   */
  get(tenant: Tenant, id: string, { fields, include }: TwinDetailQuery): Conditional<JsonText> | Promise<JsonText> {
    return versionedRead({
      variant: representationVariant(fields),
      includes: include.size > 0,
      version: () => this.twins.visibleVersion(tenant, id),
      build: async () => {
        const twin = await this.twins.findVisibleJson(tenant, id, { form: 'detail', fields, includeOrganization: include.has('organization') });
        if (twin === undefined) throw notFound('No such twin.');
        return { value: new JsonText(twin.data, twin.included ?? undefined), version: twin.version };
      },
    });
  }

  /** `POST /my/twins/`, under the client's id when the document names one (a taken id is a 409, whoever's twin it is). */
  async create(tenant: Tenant, document: ResourceDocument<TwinAttributes>): Promise<{ id: string; answer: Tagged<JsonText> }> {
    // With the client's id known, a connection to itself is refused as on a change.
    const changes = await this.changes(tenant, document, document.id);
    const written = await this.written(() => this.twins.create(tenant, changes, document.id, this.positions.channel));
    if (!written) throw idExists('twin', document.id!);
    return { id: written.id, answer: Tagged.ofVersion(new JsonText(written.document), written.version) };
  }

  /**
   * `PATCH /my/twins/<TWIN_ID>/`: twins of the caller's organization only; any other id is a 404. With
   * If-Match (`precondition`), a twin whose version is not named is a 412 and stays as it was.
   */
  async update(tenant: Tenant, id: string, document: ResourceDocument<TwinAttributes>, precondition?: Precondition): Promise<Tagged<JsonText>> {
    assertIdMatchesPath(document.id, id);
    const changes = await this.changes(tenant, document, id);
    const versions = precondition && !precondition.any ? precondition.versions : undefined;
    const written = await this.written(() => this.twins.update(tenant, id, changes, versions, this.positions.channel));
    if (!written) {
      if (versions && (await this.twins.ownExists(tenant, id))) throw preconditionFailed();
      throw notFound('No such twin in your organization.');
    }
    return Tagged.ofVersion(new JsonText(written.document), written.version);
  }

  /** A write of a twin; when it moved the twin, the move is announced once the write commits. */
  private async written(write: () => Promise<WrittenTwin | undefined>): Promise<WrittenTwin | undefined> {
    const written = await write();
    if (written?.moved_position) this.positions.announceMoves([{ twin_id: written.id, position: written.moved_position, resource: written.moved_resource, crossings: written.crossings }]);
    return written;
  }

  /** Turns filters that name other things (the reference twin, the acting twin) into SQL inputs. */
  private async resolve(tenant: Tenant, filters: TwinFilters): Promise<TwinQuery> {
    const { personality, ...rest } = filters;
    const query: TwinQuery = rest;
    query.actingTwinId = connectionTwinId(tenant, filters);
    if (personality !== undefined) {
      const reference = await this.twins.findVisible(tenant, personality);
      if (!reference) throw invalidParameter('personality', 'personality must name a twin visible to the caller.');
      query.personality = { id: reference.id, characteristics: reference.characteristics };
    }
    return query;
  }

  /** The column changes a create/modify document asks for, with the checks class-validator cannot make. */
  private async changes(tenant: Tenant, document: ResourceDocument<TwinAttributes>, twinId: string | undefined): Promise<TwinChanges> {
    const attributes = document.attributes as unknown as Record<string, unknown>;
    const changes: Record<string, unknown> = {};
    for (const [attribute, column] of Object.entries(PLAIN_ATTRIBUTES)) {
      if (attributes[attribute] !== undefined) changes[column] = attributes[attribute];
    }
    if (document.present.has('location')) changes.location = readLocation(attributes.location, `${ATTRIBUTES}/location`);
    const personality = document.attributes.personality;
    if (personality?.characteristics !== undefined) changes.characteristics = personality.characteristics;
    if (personality?.services !== undefined) changes.services = personality.services;

    const openingHours = changes.opening_hours as Record<string, unknown> | undefined;
    if (openingHours?.weekday_text !== undefined) {
      const lines = openingHours.weekday_text;
      if (!Array.isArray(lines) || lines.some((line) => typeof line !== 'string')) {
        throw invalidDocument('opening-hours.weekday_text must be an array of strings.', `${ATTRIBUTES}/opening-hours/weekday_text`);
      }
    }
    if (changes.connections !== undefined) {
      changes.connections = await this.checkConnections(tenant, changes.connections as string[], twinId);
    }
    return changes as TwinChanges;
  }

  private async checkConnections(tenant: Tenant, given: string[], twinId: string | undefined): Promise<string[]> {
    const ids = given.map((id) => id.toLowerCase());
    const self = twinId === undefined ? -1 : ids.indexOf(twinId);
    if (self >= 0) throw invalidDocument('A twin cannot be connected to itself.', `${ATTRIBUTES}/connections/${self}`);
    const visible = await this.twins.visibleIds(tenant, ids);
    const missing = ids.findIndex((id) => !visible.has(id));
    if (missing >= 0) throw invalidDocument(`Twin ${ids[missing]} does not exist or is not visible.`, `${ATTRIBUTES}/connections/${missing}`);
    return [...new Set(ids)];
  }
}

/** The query with its `sort`; nearest first alone (`sort=distance`) is `ordering=distance`, answered by the KNN index scan. */
function withSort(query: TwinQuery, sort: Representation['sort']): TwinQuery {
  if (sort?.length === 1 && sort[0].key === 'distance' && !sort[0].descending) return { ...query, ordering: 'distance' };
  return sort ? { ...query, sort } : query;
}
