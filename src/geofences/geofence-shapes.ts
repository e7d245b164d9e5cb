import Flatbush from 'flatbush';

/**
 * Closer than this to a geofence's boundary (in degrees, ~0.1 mm), a point is left to PostGIS's
 * `ST_Covers` to decide. Farther, the answer here is PostGIS's: the boundary and the crossing test below
 * are exact to ~1e-13° for coordinates within ±180, four orders of magnitude inside the margin, so only
 * a point this near an edge could be decided differently by two correct computations.
 */
export const BOUNDARY_MARGIN = 1e-9;

/** A geofence as PostgreSQL gives it to be held in memory: its id and its geometry as WKB (`ST_AsBinary`). */
export interface GeofenceShapeRow {
  id: string;
  wkb: Uint8Array;
}

/**
 * The geofence crossings of a path (points in `occurred` order) as found in memory: the geofences covering
 * its first point (to be compared with where the twin was before, which only the recording statement
 * knows), and each step after where it enters or leaves one (`step` the index of the point in the path,
 * `geofence` the index of the geofence among the shapes' `ids`).
 */
export interface PathCrossings {
  first: number[];
  steps: { step: number; geofence: number; entered: boolean }[];
}

const OUTSIDE = 0;
const INSIDE = 1;
const NEAR = 2;
type Coverage = typeof OUTSIDE | typeof INSIDE | typeof NEAR;

/** Consecutive points whose candidates are found by one search of the boxes' index: a moving twin's are close together. */
const POINTS_PER_SEARCH = 32;

/**
 * One geofence: its box and its edges (every ring's, of every polygon: for a valid Polygon or
 * MultiPolygon, a point is inside when a ray from it crosses an odd number of them), the edges listed per
 * horizontal strip of the box they reach (within BOUNDARY_MARGIN), so a point is tested against its
 * strip's few edges, not all of them.
 */
class Fence {
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
  private readonly stripHeight: number;
  /** Edge k's ends are `edges[4k..4k+3]`: x1, y1, x2, y2. */
  private readonly edges: Float64Array;
  /** Strip s lists `stripEdges[stripStart[s] .. stripStart[s + 1])`. */
  private readonly stripStart: Int32Array;
  private readonly stripEdges: Int32Array;

  constructor(
    readonly id: string,
    rings: readonly Float64Array[],
  ) {
    let count = 0;
    let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const ring of rings) {
      count += ring.length / 2 - 1;
      for (let i = 0; i < ring.length; i += 2) {
        minX = Math.min(minX, ring[i]);
        maxX = Math.max(maxX, ring[i]);
        minY = Math.min(minY, ring[i + 1]);
        maxY = Math.max(maxY, ring[i + 1]);
      }
    }
    [this.minX, this.minY, this.maxX, this.maxY] = [minX, minY, maxX, maxY];
    this.edges = new Float64Array(count * 4);
    let k = 0;
    for (const ring of rings) {
      for (let i = 0; i + 3 < ring.length; i += 2) this.edges.set(ring.subarray(i, i + 4), 4 * k++);
    }
    // As many strips as edges: a simple ring's edges then share a strip with ~2 others on average.
    const strips = maxY > minY ? Math.max(1, count) : 1;
    this.stripHeight = (maxY - minY) / strips;
    const span = (e: number): [number, number] => {
      const [y1, y2] = [this.edges[4 * e + 1], this.edges[4 * e + 3]];
      return [this.stripOf(Math.min(y1, y2) - BOUNDARY_MARGIN, strips), this.stripOf(Math.max(y1, y2) + BOUNDARY_MARGIN, strips)];
    };
    this.stripStart = new Int32Array(strips + 1);
    for (let e = 0; e < count; e++) {
      const [from, to] = span(e);
      for (let s = from; s <= to; s++) this.stripStart[s + 1]++;
    }
    for (let s = 0; s < strips; s++) this.stripStart[s + 1] += this.stripStart[s];
    this.stripEdges = new Int32Array(this.stripStart[strips]);
    const filled = this.stripStart.slice(0, strips);
    for (let e = 0; e < count; e++) {
      const [from, to] = span(e);
      for (let s = from; s <= to; s++) this.stripEdges[filled[s]++] = e;
    }
  }

  get edgeCount(): number {
    return this.edges.length / 4;
  }

  private stripOf(y: number, strips: number): number {
    if (this.stripHeight === 0) return 0;
    return Math.min(strips - 1, Math.max(0, Math.floor((y - this.minY) / this.stripHeight)));
  }

  /** Whether the point is inside (the boundary counts as inside), outside, or too near the boundary to say here. */
  coverage(x: number, y: number): Coverage {
    const m = BOUNDARY_MARGIN;
    if (x < this.minX - m || x > this.maxX + m || y < this.minY - m || y > this.maxY + m) return OUTSIDE;
    const strip = this.stripOf(y, this.stripStart.length - 1);
    const edges = this.edges;
    let inside = false;
    for (let i = this.stripStart[strip]; i < this.stripStart[strip + 1]; i++) {
      const e = 4 * this.stripEdges[i];
      const x1 = edges[e];
      const y1 = edges[e + 1];
      const x2 = edges[e + 2];
      const y2 = edges[e + 3];
      const dx = x2 - x1;
      const dy = y2 - y1;
      if (x >= Math.min(x1, x2) - m && x <= Math.max(x1, x2) + m && y >= Math.min(y1, y2) - m && y <= Math.max(y1, y2) + m) {
        // Within the edge's box widened by the margin: near when the segment itself is within it.
        const length2 = dx * dx + dy * dy;
        const t = length2 === 0 ? 0 : Math.min(1, Math.max(0, ((x - x1) * dx + (y - y1) * dy) / length2));
        const cx = x1 + t * dx - x;
        const cy = y1 + t * dy - y;
        if (cx * cx + cy * cy <= m * m) return NEAR;
      }
      // The ray towards +x crosses the edge (each end's side decided by an exact comparison).
      if (y1 > y !== y2 > y && x < x1 + ((y - y1) * dx) / dy) inside = !inside;
    }
    return inside ? INSIDE : OUTSIDE;
  }
}

/**
 * An organization's geofences held in memory, to find a path's crossings without a lookup per point in
 * PostgreSQL: their boxes in a packed R-tree (Flatbush), each one's edges in strips.
 * Built once per version of the organization's geofences (geofence-index.ts), never changed.
 */
export class GeofenceShapes {
  readonly vertices: number;
  private readonly fences: Fence[];
  private readonly boxes: Flatbush | null;
  /** Each geofence's box widened by BOUNDARY_MARGIN: minX, minY, maxX, maxY. */
  private readonly bounds: Float64Array;

  constructor(rows: readonly GeofenceShapeRow[]) {
    this.fences = rows.map((row) => new Fence(row.id, ringsOfWkb(row.wkb)));
    this.vertices = this.fences.reduce((sum, fence) => sum + fence.edgeCount, 0);
    const m = BOUNDARY_MARGIN;
    this.bounds = Float64Array.from(this.fences.flatMap((f) => [f.minX - m, f.minY - m, f.maxX + m, f.maxY + m]));
    if (this.fences.length === 0) {
      this.boxes = null;
      return;
    }
    this.boxes = new Flatbush(this.fences.length);
    for (const fence of this.fences) this.boxes.add(fence.minX, fence.minY, fence.maxX, fence.maxY);
    this.boxes.finish();
  }

  /** The point against the geofence `id` (for tests): inside, outside, or near its boundary (PostGIS's to decide). */
  coverageOf(id: string, lon: number, lat: number): 'inside' | 'outside' | 'near' {
    const fence = this.fences.find((f) => f.id === id);
    if (!fence) throw new Error(`No geofence ${id}`);
    return (['outside', 'inside', 'near'] as const)[fence.coverage(lon, lat)];
  }

  /** The geofence ids, by index (PathCrossings' `geofence`). */
  idOf(geofence: number): string {
    return this.fences[geofence].id;
  }

  /**
   * The crossings of a path (PathCrossings), or null when a point of it lies within BOUNDARY_MARGIN of a
   * candidate geofence's boundary: PostGIS is then to decide the whole path (geofence-crossings.ts).
   */
  crossingsOf(path: readonly { lon: number; lat: number }[]): PathCrossings | null {
    const crossings: PathCrossings = { first: [], steps: [] };
    if (!this.boxes) return crossings;
    const bounds = this.bounds;
    const m = BOUNDARY_MARGIN;
    let before: number[] = [];
    for (let from = 0; from < path.length; from += POINTS_PER_SEARCH) {
      const to = Math.min(path.length, from + POINTS_PER_SEARCH);
      let minX = Infinity;
      let minY = Infinity;
      let maxX = -Infinity;
      let maxY = -Infinity;
      for (let k = from; k < to; k++) {
        const { lon, lat } = path[k];
        if (lon < minX) minX = lon;
        if (lon > maxX) maxX = lon;
        if (lat < minY) minY = lat;
        if (lat > maxY) maxY = lat;
      }
      const candidates: number[] = this.boxes.search(minX - m, minY - m, maxX + m, maxY + m);
      for (let k = from; k < to; k++) {
        const { lon, lat } = path[k];
        let inside = before;
        // A twin standing still is where it was.
        if (k === 0 || lon !== path[k - 1].lon || lat !== path[k - 1].lat) {
          inside = [];
          for (let c = 0; c < candidates.length; c++) {
            const f = candidates[c];
            const b = 4 * f;
            if (lon < bounds[b] || lat < bounds[b + 1] || lon > bounds[b + 2] || lat > bounds[b + 3]) continue;
            const coverage = this.fences[f].coverage(lon, lat);
            if (coverage === NEAR) return null;
            if (coverage === INSIDE) inside.push(f);
          }
        }
        if (k === 0) crossings.first = inside;
        else if (inside !== before) {
          for (const f of inside) if (!before.includes(f)) crossings.steps.push({ step: k, geofence: f, entered: true });
          for (const f of before) if (!inside.includes(f)) crossings.steps.push({ step: k, geofence: f, entered: false });
        }
        before = inside;
      }
    }
    return crossings;
  }
}

/**
 * The rings of a WKB Polygon or MultiPolygon (2D, either byte order), each as x, y pairs, closing vertex
 * included: what `ST_AsBinary` gives of a geofence (geofence-geometry.ts admits no other type).
 */
export function ringsOfWkb(wkb: Uint8Array): Float64Array[] {
  const view = new DataView(wkb.buffer, wkb.byteOffset, wkb.byteLength);
  const rings: Float64Array[] = [];
  let offset = 0;
  let little = true;
  const uint32 = () => ((offset += 4), view.getUint32(offset - 4, little));
  const header = () => {
    little = view.getUint8(offset++) === 1;
    return uint32();
  };
  const polygon = () => {
    const count = uint32();
    for (let r = 0; r < count; r++) {
      const ring = new Float64Array(uint32() * 2);
      for (let i = 0; i < ring.length; i++) ring[i] = view.getFloat64(offset + 8 * i, little);
      offset += 8 * ring.length;
      rings.push(ring);
    }
  };
  const type = header();
  if (type === 3) polygon();
  else if (type === 6) {
    const count = uint32();
    for (let p = 0; p < count; p++) {
      if (header() !== 3) throw new Error('A MultiPolygon WKB holds a geometry other than a Polygon');
      polygon();
    }
  } else throw new Error(`Not a 2D Polygon or MultiPolygon WKB (type ${type})`);
  if (offset !== wkb.byteLength) throw new Error('WKB longer than its geometry');
  return rings;
}
