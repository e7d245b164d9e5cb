import type { Prng } from '../../places/prng.js';

/**
 * Plausible paths for simulated vehicles (`simulate-fleet`): a correlated random walk on the sphere. Each
 * step keeps the heading but for a small drift, turns about a right angle now and then (a street corner),
 * and lets the speed wander within half and one and a half times the vehicle's own. Seeded, so the same
 * seed draws the same paths.
 */

const EARTH_RADIUS_M = 6_371_008.8;
const DEGREES = 180 / Math.PI;
/** Chance that a step is a corner. */
const CORNER_CHANCE = 0.04;
/** Largest drift of the heading in a step, in degrees. */
const DRIFT_DEGREES = 12;
/** Latitudes beyond are turned back from (the map's Web Mercator ends at ±85.05°). */
const MAX_LATITUDE = 84;

export interface WalkPosition {
  lon: number;
  lat: number;
  /** Degrees clockwise from north, [0, 360). */
  heading: number;
  /** Metres per second over the step. */
  speed: number;
}

export class FleetWalker {
  private heading: number;
  private speed: number;

  constructor(
    private lon: number,
    private lat: number,
    /** The vehicle's usual speed, metres per second. */
    private readonly cruise: number,
    private readonly random: Prng,
  ) {
    this.heading = random.next() * 360;
    this.speed = cruise;
  }

  /** Where the vehicle is after `seconds` more. */
  step(seconds: number): WalkPosition {
    const corner = this.random.next() < CORNER_CHANCE;
    const turn = corner ? (this.random.next() < 0.5 ? -90 : 90) : (this.random.next() * 2 - 1) * DRIFT_DEGREES;
    this.heading = (((this.heading + turn) % 360) + 360) % 360;
    this.speed = Math.min(1.5 * this.cruise, Math.max(0.5 * this.cruise, this.speed * (0.9 + this.random.next() * 0.2)));
    const distance = this.speed * seconds;
    const bearing = this.heading / DEGREES;
    const was = this.lat;
    const lat = this.lat + ((distance * Math.cos(bearing)) / EARTH_RADIUS_M) * DEGREES;
    if (Math.abs(lat) > MAX_LATITUDE) {
      this.heading = (540 - this.heading) % 360; // back from the pole, as a road along the edge would
    } else {
      this.lat = lat;
    }
    // East-west at the step's middle latitude, where a degree of longitude is as long as on average over it.
    const lon = this.lon + ((distance * Math.sin(bearing)) / (EARTH_RADIUS_M * Math.cos((was + this.lat) / 2 / DEGREES))) * DEGREES;
    this.lon = ((((lon + 180) % 360) + 360) % 360) - 180;
    return { lon: round(this.lon), lat: round(this.lat), heading: round(this.heading, 1) % 360, speed: round(this.speed, 2) };
  }
}

/** Seven decimals of a degree are about a centimetre: as precise as a device's fix can mean. */
const round = (value: number, digits = 7) => Number(value.toFixed(digits));

/** Great-circle distance in metres (haversine), for checks of the walk. */
export function distanceMetres(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const dLat = (b.lat - a.lat) / DEGREES;
  const dLon = (b.lon - a.lon) / DEGREES;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat / DEGREES) * Math.cos(b.lat / DEGREES) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}
