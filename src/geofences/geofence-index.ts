import { Injectable, Logger } from '@nestjs/common';
import { GeofenceShapes } from './geofence-shapes.js';
import { GeofencesRepository } from './geofences.repository.js';

/**
 * A batch's geofence crossings as found among the geofences an instance holds, in the arrays its statement
 * reads (geofence-crossings.ts), with the version of the geofences they were found among. Twins are
 * numbered from 1 in the order of their first position in the batch, positions by their index in it
 * (from 0), geofences from 1 in `ids`.
 */
export interface HeldCrossings {
  version: string;
  /** Per twin, its earliest position. */
  firstOf: number[];
  /** The geofences covering each twin's earliest position: pairs of a twin and a geofence. */
  firstTwin: number[];
  firstGeofence: number[];
  /** Each crossing after a twin's earliest position: the position, the geofence, entered (or left). */
  point: number[];
  geofence: number[];
  entered: boolean[];
  ids: string[];
}

/**
 * Vertices of all organizations' geofences an instance holds at most (~40 bytes each in memory, ~10 MB),
 * the least recently used dropped first; an organization with more than this alone is never held.
 */
const HELD_VERTICES = 250_000;

/**
 * The geofences of organizations whose batches of positions this instance records, held in memory
 * (GeofenceShapes) with the version of the set they form (migration GeofenceSets), to find a batch's
 * crossings here rather than by a lookup of PostgreSQL's index per 32 points and a test per point.
 *
 * Exact across instances and transactions without any message between them: the statement that records a
 * batch uses the crossings found here only when the version it reads in its own snapshot is the one they
 * were found at, and every position was new (geofence-crossings.ts); it searches PostgreSQL's index
 * itself otherwise. Every statement of the kind answers the version it read; a version this instance does
 * not hold is loaded in the background, once at a time per organization, so no request waits for it.
 */
@Injectable()
export class GeofenceIndex {
  private readonly logger = new Logger('GeofenceIndex');
  /** In use order, the most recent last. */
  private readonly held = new Map<string, { version: string; shapes: GeofenceShapes }>();
  private readonly loading = new Set<string>();
  private heldVertices = 0;

  constructor(private readonly geofences: GeofencesRepository) {}

  /**
   * The crossings of a batch (`twinIds[i]` is position i's twin) among the organization's geofences as held
   * here. Undefined when none are held, or when PostgreSQL is to find them: two positions of a twin in one
   * millisecond (their order, or whether they are one, is PostgreSQL's to say), or a point within
   * BOUNDARY_MARGIN of a geofence's boundary.
   */
  crossingsOf(organizationId: string, twinIds: readonly string[], positions: readonly { lon: number; lat: number; occurredMs: number }[]): HeldCrossings | undefined {
    const entry = this.held.get(organizationId);
    if (!entry) return undefined;
    this.held.delete(organizationId);
    this.held.set(organizationId, entry);
    const paths = new Map<string, number[]>();
    twinIds.forEach((twinId, index) => {
      const path = paths.get(twinId);
      if (path) path.push(index);
      else paths.set(twinId, [index]);
    });
    const held: HeldCrossings = { version: entry.version, firstOf: [], firstTwin: [], firstGeofence: [], point: [], geofence: [], entered: [], ids: [] };
    const numberOf = new Map<number, number>();
    const number = (geofence: number) => {
      let n = numberOf.get(geofence);
      if (n === undefined) numberOf.set(geofence, (n = held.ids.push(entry.shapes.idOf(geofence))));
      return n;
    };
    let twin = 0;
    for (const path of paths.values()) {
      twin++;
      path.sort((a, b) => positions[a].occurredMs - positions[b].occurredMs);
      for (let k = 1; k < path.length; k++) if (positions[path[k]].occurredMs === positions[path[k - 1]].occurredMs) return undefined;
      const crossings = entry.shapes.crossingsOf(path.map((index) => positions[index]));
      if (!crossings) return undefined;
      held.firstOf.push(path[0]);
      for (const geofence of crossings.first) {
        held.firstTwin.push(twin);
        held.firstGeofence.push(number(geofence));
      }
      for (const { step, geofence, entered } of crossings.steps) {
        held.point.push(path[step]);
        held.geofence.push(number(geofence));
        held.entered.push(entered);
      }
    }
    return held;
  }

  /** The version of the organization's geofences held here, if any (for tests). */
  versionOf(organizationId: string): string | undefined {
    return this.held.get(organizationId)?.version;
  }

  /**
   * The version of the organization's geofences a statement read (null: it never had one). When it is not
   * the one held, the organization's geofences are loaded again, in the background.
   */
  observed(organizationId: string, version: string | null): void {
    if (version === null) return this.drop(organizationId);
    if (this.held.get(organizationId)?.version === version || this.loading.has(organizationId)) return;
    this.loading.add(organizationId);
    this.load(organizationId)
      .catch((error: unknown) => this.logger.warn(`Geofences of organization ${organizationId} not loaded: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.loading.delete(organizationId));
  }

  /** Loaded (or refused for their size) by now: for tests, which wait for a load the statements began. */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private async load(organizationId: string): Promise<void> {
    const { version, vertices, rows } = await this.geofences.shapes(organizationId, HELD_VERTICES);
    this.drop(organizationId);
    if (version === null || vertices > HELD_VERTICES) return;
    const shapes = new GeofenceShapes(rows);
    this.held.set(organizationId, { version, shapes });
    this.heldVertices += shapes.vertices;
    for (const other of this.held.keys()) {
      if (this.heldVertices <= HELD_VERTICES) break;
      this.drop(other);
    }
  }

  private drop(organizationId: string): void {
    const entry = this.held.get(organizationId);
    if (!entry) return;
    this.held.delete(organizationId);
    this.heldVertices -= entry.shapes.vertices;
  }
}
