import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { notFound } from '../common/json-api/api-error.js';
import { FeatureCollection } from '../common/json-api/envelope.js';
import { CursorCodec } from '../common/json-api/cursor.js';
import { connectionTwinId } from '../twins/twin-conditions.js';
import { readFilter } from './cql2/filter.js';
import { DEFAULT_LIMIT, queryableEqualities, type ItemsQuery } from './ogc-query.js';
import type { Expression } from './cql2/cql2-ast.js';
import { TWIN_QUERYABLES } from './ogc-queryables.js';
import { OgcRepository, type ItemsPageRequest } from './ogc.repository.js';
import { collections, conformance, landingPage, queryables, twinsCollection, unionExtent, type TwinsExtent } from './ogc.resource.js';

/** The list of the cursors of items pages (cursor.ts): a cursor of another list is refused. */
const CURSOR_SCOPE = 'ogc-twins:id';

/**
 * How long an extent is kept. Reading the extent of the twins every organization sees scans them all
 * (1.4–3 s at a million twins, warm or cold), and it is the same for every caller; an organization's own
 * other twins are read from its index, but row by row (0.9 s for 50,000). A collection's extent describes
 * it: a minute behind is a fair description, and GIS clients read the collections each time they open
 * the service.
 */
const EXTENT_MS = 60_000;
/** Organizations whose own part is kept at once (the oldest goes first). */
const KEPT_ORGANIZATIONS = 1000;

/** A value read at most once per EXTENT_MS (a failed read is not kept). */
class Kept<T> {
  private at = 0;
  private value: Promise<T> | undefined;

  get(read: () => Promise<T>, now: number): Promise<T> {
    if (!this.value || now - this.at > EXTENT_MS) {
      const value = read();
      [this.at, this.value] = [now, value];
      value.catch(() => {
        if (this.value === value) this.value = undefined;
      });
    }
    return this.value;
  }
}

/**
 * The twins as an OGC API – Features service (`/ogc`). Services take values: `base` is the service's
 * absolute URL of `/ogc`, which the controller works out from the request.
 */
@Injectable()
export class OgcService {
  private readonly shared = new Kept<TwinsExtent>();
  private readonly own = new Map<string, Kept<TwinsExtent>>();

  constructor(
    private readonly ogc: OgcRepository,
    private readonly cursors: CursorCodec,
  ) {}

  landing(base: string, docsUrl: string) {
    return landingPage(base, docsUrl);
  }

  conformance() {
    return conformance();
  }

  async collections(tenant: Tenant, base: string) {
    return collections(base, await this.extent(tenant));
  }

  async collection(tenant: Tenant, base: string) {
    return twinsCollection(base, await this.extent(tenant));
  }

  /** The extent of what the caller sees: the shared twins' and its organization's other twins', each kept EXTENT_MS. */
  private async extent(tenant: Tenant): Promise<TwinsExtent> {
    const now = Date.now();
    let own = this.own.get(tenant.organization.id);
    if (!own) {
      if (this.own.size >= KEPT_ORGANIZATIONS) this.own.delete(this.own.keys().next().value!);
      this.own.set(tenant.organization.id, (own = new Kept()));
    }
    const [shared, others] = await Promise.all([this.shared.get(() => this.ogc.sharedExtent(), now), own.get(() => this.ogc.ownExtent(tenant), now)]);
    return unionExtent(shared, others);
  }

  queryables(base: string) {
    return queryables(base);
  }

  /**
   * A page of the visible located twins as features: the list filters, `bbox`, `datetime` and a CQL2
   * `filter` narrow it; `page_after` / `page_before` continue from a `next` / `prev` link.
   */
  async items(tenant: Tenant, query: ItemsQuery): Promise<FeatureCollection> {
    const { bbox, datetime, limit, filter, 'filter-lang': language, properties, page_after, page_before, is_public, is_personal, characteristics, organization, is_connection, is_supplier } =
      query;
    const filters = { is_public, is_personal, characteristics, organization, is_connection, is_supplier };
    const parsed = filter === undefined ? undefined : readFilter(filter, language ?? 'cql2-text', TWIN_QUERYABLES);
    // The queryables given as parameters are comparisons ANDed with the filter.
    const equalities = queryableEqualities(query);
    const expressions: Expression[] = [...equalities, ...(parsed ? [parsed.expression] : [])];
    const condition =
      expressions.length === 0 ? undefined : { expression: expressions.length === 1 ? expressions[0] : { kind: 'and' as const, args: expressions }, options: parsed?.options ?? {} };
    const [direction, parameter, cursor] = page_before !== undefined ? (['before', 'page_before', page_before] as const) : (['after', 'page_after', page_after] as const);
    const position = cursor === undefined ? null : this.cursors.decode(CURSOR_SCOPE, parameter, cursor)[0];
    const request: ItemsPageRequest = { direction, position, size: limit ?? DEFAULT_LIMIT, properties };
    const page = await this.ogc.items(tenant, { filters: { ...filters, actingTwinId: connectionTwinId(tenant, filters) }, bbox, datetime, filter: condition }, request);

    // Reading forwards, `next` while more follow, `prev` when the page was read from a position (rows
    // were before it); backwards the other way round. An empty page read from a position links back to it.
    const at = (id: string | null) => (id === null ? null : this.cursors.encode(CURSOR_SCOPE, [id]));
    const ahead = page.more ? at(direction === 'after' ? page.last : page.first) : null;
    const behind = position === null ? null : at((direction === 'after' ? page.first : page.last) ?? position);
    return direction === 'after' ? new FeatureCollection(page.features, page.count, ahead, behind) : new FeatureCollection(page.features, page.count, behind, ahead);
  }

  /** One visible located twin as a feature (JSON text); any other id is a 404. */
  async item(tenant: Tenant, id: string): Promise<string> {
    const feature = await this.ogc.item(tenant, id);
    if (feature === undefined) throw notFound('No twin with a location that the caller sees has this id.');
    return feature;
  }
}
