import { Prng } from '../../places/prng.js';
import { FleetWalker, type WalkPosition } from './fleet-walk.js';

/**
 * Moves twins of an organization the way a fleet's devices would (`simulate-fleet`): through the API, as a
 * client, with the caller's token. Every `interval` each twin takes a step of its walk (fleet-walk.ts)
 * and keeps the position; every `batch` positions it uploads them (`POST /twins/<id>/positions`), one
 * upload in flight per twin (positions taken meanwhile wait for the next). A 429 or 503 is waited out as
 * `Retry-After` says and the positions sent again; any other refusal is counted and its positions dropped.
 */

export interface FleetOptions {
  /** The service's base URL (`http://localhost:3000`). */
  url: string;
  token: string;
  organization: string;
  twins: number;
  seconds: number;
  /** Seconds between two positions of a twin. */
  interval: number;
  /** Positions an upload carries (a device that reports in bursts). */
  batch: number;
  /** Usual speed of a vehicle, metres per second. */
  speed: number;
  /** Where twins without a location start, `[lon, lat]`. */
  center: [number, number];
  seed: number;
}

export interface FleetProgress {
  positions: number;
  uploads: number;
  failed: number;
}

export interface FleetSummary extends FleetProgress {
  twins: number;
  /** Positions taken but not stored (refused uploads), and uploads waited out (429, 503). */
  dropped: number;
  retried: number;
  /** Refusals by status and error code, e.g. `{"400 invalid_attribute": 2}`. */
  refusals: Record<string, number>;
  p50Ms: number | null;
  p99Ms: number | null;
  elapsedMs: number;
}

const JSON_API = 'application/vnd.api+json';
/** How many twin details are read at once to find where each twin starts. */
const SETUP_CONCURRENCY = 8;
/** The most positions one upload takes (the route's limit). */
const MAX_UPLOAD = 1000;

interface Vehicle {
  id: string;
  walker: FleetWalker;
  pending: { position: WalkPosition; occurred: string }[];
  uploading: Promise<void> | null;
}

export class FleetSimulator {
  private readonly latencies: number[] = [];
  private readonly summary: FleetSummary = { twins: 0, positions: 0, uploads: 0, failed: 0, dropped: 0, retried: 0, refusals: {}, p50Ms: null, p99Ms: null, elapsedMs: 0 };

  constructor(
    private readonly options: FleetOptions,
    private readonly onProgress: (progress: FleetProgress) => void = () => {},
  ) {}

  /** The organization's first `twins` twins (in the order of `GET /my/twins/`), and where each is. */
  async vehicles(): Promise<Vehicle[]> {
    const random = new Prng(this.options.seed);
    const ids: string[] = [];
    let after = '';
    while (ids.length < this.options.twins) {
      const page = await this.get(`/my/twins/?page_size=100&page_after=${encodeURIComponent(after)}`);
      ids.push(...(page.data as { id: string }[]).map((twin) => twin.id));
      const next = (page.links as { next?: string | null } | undefined)?.next;
      if (!next) break;
      after = new URL(next).searchParams.get('page_after') ?? '';
    }
    if (ids.length < this.options.twins) {
      throw new Error(`the organization has ${ids.length} twin(s), fewer than --twins ${this.options.twins}: create more (POST /my/twins/) or ask for fewer`);
    }
    const chosen = ids.slice(0, this.options.twins);
    const starts: [number, number][] = new Array(chosen.length);
    for (let i = 0; i < chosen.length; i += SETUP_CONCURRENCY) {
      await Promise.all(
        chosen.slice(i, i + SETUP_CONCURRENCY).map(async (id, j) => {
          const twin = await this.get(`/twins/${id}/`);
          const location = (twin.data as { attributes: { location: { coordinates: [number, number] } | null } }).attributes.location;
          starts[i + j] = location?.coordinates ?? this.scatter(random);
        }),
      );
    }
    return chosen.map((id, i) => ({
      id,
      // Each vehicle its own speed around the fleet's, and its own stream of numbers.
      walker: new FleetWalker(starts[i][0], starts[i][1], this.options.speed * (0.6 + random.next() * 0.8), new Prng(`${this.options.seed}:${i}`)),
      pending: [],
      uploading: null,
    }));
  }

  /** Runs the fleet for `seconds`; every position taken is uploaded (or counted as dropped) before it resolves. */
  async run(): Promise<FleetSummary> {
    const vehicles = await this.vehicles();
    this.summary.twins = vehicles.length;
    const started = performance.now();
    const steps = Math.max(1, Math.floor(this.options.seconds / this.options.interval));
    for (let step = 1; step <= steps; step++) {
      // Steps keep to the clock (not to the uploads): a slow service makes bigger uploads, not fewer positions.
      const due = started + step * this.options.interval * 1000;
      await sleep(due - performance.now());
      const occurred = new Date().toISOString();
      for (const vehicle of vehicles) {
        vehicle.pending.push({ position: vehicle.walker.step(this.options.interval), occurred });
        if (vehicle.pending.length >= this.options.batch && !vehicle.uploading) this.upload(vehicle);
      }
    }
    // What is left: uploaded until every vehicle's positions are in.
    for (;;) {
      const busy = vehicles.filter((v) => v.uploading || v.pending.length > 0);
      if (busy.length === 0) break;
      for (const vehicle of busy) if (!vehicle.uploading) this.upload(vehicle);
      await Promise.all(busy.map((v) => v.uploading));
    }
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const quantile = (q: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10 : null);
    return { ...this.summary, p50Ms: quantile(0.5), p99Ms: quantile(0.99), elapsedMs: Math.round(performance.now() - started) };
  }

  private upload(vehicle: Vehicle): void {
    const sending = vehicle.pending.splice(0, MAX_UPLOAD);
    const body = JSON.stringify({
      data: sending.map(({ position, occurred }) => ({
        type: 'positions',
        attributes: { coordinates: [position.lon, position.lat], occurred, speed: position.speed, heading: position.heading },
      })),
    });
    vehicle.uploading = (async () => {
      for (;;) {
        const from = performance.now();
        let response: Response;
        try {
          response = await fetch(`${this.options.url}/twins/${vehicle.id}/positions`, { method: 'POST', headers: { ...this.headers(), 'content-type': JSON_API }, body });
        } catch (error) {
          this.refused(`network ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`, sending.length);
          return;
        }
        const text = await response.text();
        if (response.status === 429 || response.status === 503) {
          this.summary.retried++;
          await sleep(retryAfterMs(response.headers.get('retry-after')));
          continue;
        }
        this.latencies.push(performance.now() - from);
        if (response.ok) {
          this.summary.uploads++;
          this.summary.positions += sending.length;
        } else {
          this.refused(`${response.status} ${errorCode(text)}`, sending.length);
        }
        this.onProgress({ positions: this.summary.positions, uploads: this.summary.uploads, failed: this.summary.failed });
        return;
      }
    })().finally(() => (vehicle.uploading = null));
  }

  private refused(reason: string, positions: number): void {
    this.summary.failed++;
    this.summary.dropped += positions;
    this.summary.refusals[reason] = (this.summary.refusals[reason] ?? 0) + 1;
  }

  private headers(): Record<string, string> {
    return { authorization: `Token ${this.options.token}`, 'x-organization': this.options.organization, accept: JSON_API };
  }

  /** A GET of the set-up; any refusal ends the run (exit 1) with the service's own words, before anything moves. */
  private async get(path: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.options.url}${path}`, { headers: this.headers() });
    } catch (error) {
      throw new Error(`cannot reach ${this.options.url}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${errorDetail(text)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** A start within ~2 km of the center, for a twin with no location yet. */
  private scatter(random: Prng): [number, number] {
    const [lon, lat] = this.options.center;
    return [lon + (random.next() - 0.5) * 0.05, lat + (random.next() - 0.5) * 0.03];
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Retry-After in seconds (the service sends seconds), at least a tenth of a second, at most a minute. */
function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.max(100, Math.min(60_000, seconds * 1000)) : 1000;
}

function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { errors?: { code?: string }[] }).errors?.[0]?.code ?? 'error';
  } catch {
    return 'error';
  }
}

function errorDetail(text: string): string {
  try {
    const error = (JSON.parse(text) as { errors?: { code?: string; detail?: string; title?: string }[] }).errors?.[0];
    if (error) return `${error.code ?? ''} ${error.detail ?? error.title ?? ''}`.trim();
  } catch {
    // not JSON: shown as it came
  }
  return text.slice(0, 300);
}
