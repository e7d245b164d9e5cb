import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../../common/auth/tenant.js';
import { ApiError, invalidParameter, notFound } from '../../common/json-api/api-error.js';
import { CursorCodec } from '../../common/json-api/cursor.js';
import { FeatureCollection, RawBody } from '../../common/json-api/envelope.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { Sql } from '../../database/sql.js';
import { EventBus, eventChangeOf, type EventChange } from '../../events/event-bus.js';
import { PER_CHUNK_FROM } from '../../geofences/geofence-crossings.js';
import { GeofenceIndex } from '../../geofences/geofence-index.js';
import type { ChangeRow } from '../../database/change-log.js';
import { readPositionUpload, utcDaysOf, type Position, type PositionWindow } from './position-body.js';
import { PositionPartitions } from './position-partitions.js';
import { PositionsRepository, type RecordedTwin, type TrackRange } from './positions.repository.js';
import type { TrackQuery } from './track-query.js';
import { simplifyTrack } from './track-line.js';

/** Positions per track page unless `page_size` says otherwise. */
export const TRACK_PAGE_SIZE = 1000;

/** What an upload or a batch's positions did: how many were sent, how many were new (the rest were duplicates). */
export interface PositionCounts {
  received: number;
  new: number;
}

/** PostgreSQL's refusal of a row no partition of `positions` holds. */
const isMissingPartition = (error: unknown): boolean => error instanceof Error && /no partition of relation "positions"/.test(error.message);

/** A position names a twin its organization does not have (or none): 404, and the upload or batch stores nothing. */
export class UnknownTwin extends ApiError {
  constructor(readonly twinId: string) {
    super(404, 'not_found', 'Not found', `No twin of your organization has the id ${twinId}.`);
  }
}

/**
 * Positions and tracks (docs/API.md, "Positions and tracks"): all or nothing per upload, a duplicate
 * (same twin and `occurred`) stored once, a twin moved only by a position newer than its location, one
 * `twin.moved` change per twin and upload. A track is the caller's organization's alone, even for a
 * public twin: where a person or a vehicle was is not public.
 */
@Injectable()
export class PositionsService {
  constructor(
    private readonly positions: PositionsRepository,
    private readonly partitions: PositionPartitions,
    private readonly bus: EventBus,
    private readonly cursors: CursorCodec,
    private readonly sql: Sql,
    private readonly geofenceIndex: GeofenceIndex,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** When a position may have occurred, for the readers of uploads and batches. */
  window(): PositionWindow {
    return { now: Date.now(), retentionDays: this.config.positionRetentionDays };
  }

  /** `POST /twins/<TWIN_ID>/positions`: `{meta: {received, new}}`. */
  async upload(tenant: Tenant, twinId: string, body: unknown): Promise<RawBody<{ meta: PositionCounts }>> {
    const positions = readPositionUpload(body, this.window());
    return new RawBody({ meta: await this.record(tenant, positions.map(() => twinId), positions) });
  }

  /**
   * Stores positions of the organization's twins (`twinIds[i]` is position i's), in the caller's
   * transaction if one is open. A twin that is not the organization's refuses them all (UnknownTwin,
   * a 404), and nothing is stored.
   */
  async record(tenant: Tenant, twinIds: readonly string[], positions: readonly Position[]): Promise<PositionCounts> {
    const days = utcDaysOf(positions);
    await this.partitions.ensure(days);
    const organizationId = tenant.organization.id;
    // A batch's geofence crossings found in memory when this instance holds the organization's geofences
    // (geofence-index.ts): the statement takes them only if they are current.
    const chunked = positions.length >= PER_CHUNK_FROM;
    const held = chunked ? this.geofenceIndex.crossingsOf(organizationId, twinIds, positions) : undefined;
    const store = async () => {
      const rows = await this.positions.record(organizationId, twinIds, positions, this.bus.channel, held);
      if (chunked && rows.length > 0) this.sql.afterCommit(() => this.geofenceIndex.observed(organizationId, rows[0].geofences));
      const found = new Set(rows.map((row) => row.twin_id));
      const unknown = twinIds.find((id) => !found.has(id));
      if (unknown !== undefined) throw new UnknownTwin(unknown);
      this.announceMoves(rows);
      return rows;
    };
    // One twin's positions are one statement: stored whole or, for a twin not the organization's, not at
    // all. Several twins' need a transaction, which rolls back the others' when one is not.
    const once = () => (new Set(twinIds).size === 1 ? store() : this.sql.transaction(store));
    const recorded = await once().catch(async (error: unknown) => {
      // A day's partition dropped since this instance last looked (by another instance's retention, or by
      // hand): made again, and the positions stored once more. Inside a caller's transaction the error
      // has aborted it, so only a statement of its own can be retried.
      if (!isMissingPartition(error) || this.sql.inTransaction) throw error;
      await this.partitions.ensure(days, true);
      return once();
    });
    return { received: positions.length, new: recorded.reduce((sum, row) => sum + row.stored, 0) };
  }

  /** The event bus's NOTIFY channel, for statements that record a move (null: announceMoves does it after commit). */
  get channel(): string | null {
    return this.bus.channel;
  }

  /**
   * Moves recorded in the caller's transaction, to the in-process bus once it committed (a bus with a
   * channel had PostgreSQL NOTIFY them from the statement).
   */
  announceMoves(rows: readonly Pick<RecordedTwin, 'twin_id' | 'position' | 'resource' | 'crossings'>[]): void {
    if (this.bus.channel !== null) return;
    for (const row of rows) {
      const changes: EventChange[] = [];
      if (row.position !== null && row.resource !== null) {
        changes.push({ position: row.position, op: 'twin.moved', twinId: row.twin_id, id: row.twin_id, name: '', category: '', data: row.resource });
      }
      // Its geofence crossings (events of its timeline), with the move in position order: a stream
      // takes a position at or before the last it sent as already had.
      for (const crossing of row.crossings === null ? [] : (JSON.parse(row.crossings) as ChangeRow[])) {
        const change = eventChangeOf(crossing);
        if (change) changes.push(change);
      }
      changes.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
      for (const change of changes) this.sql.afterCommit(() => this.bus.committed(change));
    }
  }

  /** `GET /twins/<TWIN_ID>/track`: a page of the twin's positions as Point features, or as one line. */
  async track(tenant: Tenant, twinId: string, query: TrackQuery): Promise<FeatureCollection> {
    if (query.since !== undefined && query.until !== undefined && Date.parse(query.since) >= Date.parse(query.until)) {
      throw invalidParameter('until', 'until must be later than since (since is inclusive, until exclusive).');
    }
    if (query.simplify !== undefined && query.format !== 'line') throw invalidParameter('simplify', 'simplify thins a line: give it with format=line.');
    const scope = `track:${twinId}`;
    const after = query.page_after ? this.cursors.decode(scope, 'page_after', query.page_after)[0] : undefined;
    const range: TrackRange = { since: query.since, until: query.until, after, size: query.page_size ?? TRACK_PAGE_SIZE };
    const cursor = (last: string) => this.cursors.encode(scope, [last]);
    if (query.format !== 'line') {
      const page = await this.positions.trackFeatures(tenant.organization.id, twinId, range);
      if (!page.own) throw notFound(`No twin of your organization has the id ${twinId}.`);
      const more = page.count > range.size;
      return new FeatureCollection(page.features, Math.min(page.count, range.size), more && page.last ? cursor(page.last) : null);
    }
    if (query.simplify === undefined) {
      // The whole page as it is: the line's text written by PostgreSQL, as the points' is.
      const line = await this.positions.trackLine(tenant.organization.id, twinId, range);
      if (!line.own) throw notFound(`No twin of your organization has the id ${twinId}.`);
      if (line.returned === 0) return new FeatureCollection('[]', 0, null);
      const more = line.count > range.size;
      // One position is no line: it is drawn as the point it is, with its one time.
      const geometry = line.returned === 1 ? `{"type":"Point","coordinates":${line.coordinates}}` : `{"type":"LineString","coordinates":[${line.coordinates}]}`;
      const feature = `{"type":"Feature","geometry":${geometry},"properties":{"times":[${line.times}],"positions":${line.returned}}}`;
      return new FeatureCollection(`[${feature}]`, 1, more && line.last ? cursor(line.last) : null);
    }
    const [own, rows] = await Promise.all([this.positions.ownTwin(tenant.organization.id, twinId), this.positions.trackRows(tenant.organization.id, twinId, range)]);
    if (!own) throw notFound(`No twin of your organization has the id ${twinId}.`);
    const more = rows.length > range.size;
    const page = more ? rows.slice(0, range.size) : rows;
    if (page.length === 0) return new FeatureCollection('[]', 0, null);
    const kept = simplifyTrack(
      page.map((row) => [row.lon, row.lat] as const),
      query.simplify ?? 0,
    );
    const coordinates = kept.map((index) => [page[index].lon, page[index].lat]);
    const times = kept.map((index) => page[index].occurred);
    // One position is no line: it is drawn as the point it is, with its one time.
    const geometry = coordinates.length === 1 ? { type: 'Point', coordinates: coordinates[0] } : { type: 'LineString', coordinates };
    const feature = { type: 'Feature', geometry, properties: { times, positions: page.length } };
    return new FeatureCollection(`[${JSON.stringify(feature)}]`, 1, more ? cursor(page[page.length - 1].occurred) : null);
  }
}
