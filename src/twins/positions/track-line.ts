/** Mean Earth radius (metres), the sphere distances are measured on. */
const EARTH_RADIUS = 6_371_008.8;
const RADIANS = Math.PI / 180;

/** A vertex of a track: longitude, latitude (degrees). */
export type LonLat = readonly [number, number];

/**
 * The indexes of the vertices Douglas–Peucker keeps at `tolerance` metres: the first and the last, and
 * recursively the one farthest from the chord between two kept ones while it is farther than the
 * tolerance. Distances are measured in metres on the sphere, each chord in an equirectangular projection
 * centred on its own latitude (within a metre per kilometre for chords up to a few hundred kilometres,
 * which is what a track's are). Iterative, so a 10,000-vertex track cannot exhaust the stack.
 */
export function simplifyTrack(vertices: readonly LonLat[], tolerance: number): number[] {
  const n = vertices.length;
  if (n <= 2 || tolerance <= 0) return vertices.map((_, index) => index);
  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  const stack: [number, number][] = [[0, n - 1]];
  while (stack.length > 0) {
    const [first, last] = stack.pop()!;
    let farthest = -1;
    let distance = tolerance;
    for (let i = first + 1; i < last; i++) {
      const d = distanceToChord(vertices[i], vertices[first], vertices[last]);
      if (d > distance) {
        distance = d;
        farthest = i;
      }
    }
    if (farthest < 0) continue;
    keep[farthest] = 1;
    stack.push([first, farthest], [farthest, last]);
  }
  const kept: number[] = [];
  for (let i = 0; i < n; i++) if (keep[i]) kept.push(i);
  return kept;
}

/** Metres from `p` to the segment `a`–`b`. */
export function distanceToChord(p: LonLat, a: LonLat, b: LonLat): number {
  const scale = Math.cos(((a[1] + b[1]) / 2) * RADIANS);
  // Metres east and north of `a`; longitudes across the antimeridian take the short way round.
  const east = (lon: number) => wrapDegrees(lon - a[0]) * RADIANS * EARTH_RADIUS * scale;
  const north = (lat: number) => (lat - a[1]) * RADIANS * EARTH_RADIUS;
  const [bx, by, px, py] = [east(b[0]), north(b[1]), east(p[0]), north(p[1])];
  const length2 = bx * bx + by * by;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, (px * bx + py * by) / length2));
  return Math.hypot(px - t * bx, py - t * by);
}

const wrapDegrees = (degrees: number): number => ((((degrees + 180) % 360) + 360) % 360) - 180;
