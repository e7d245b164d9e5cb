import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { anyCause } from '../database/driver-errors.js';
import { Sql } from '../database/sql.js';
import { isUuid } from '../common/value-checks.js';
import { FeatureCollectionScanner } from './feature-collection-scanner.js';
import { mapFeature } from './place-mapping.js';
import type { PlaceTwinRow } from '../twins/place-twin.js';
import { PlacesRepository } from './places.repository.js';
import { TwinsRepository } from '../twins/twins.repository.js';

export class PlaceImportError extends Error {}

export interface SkippedFeature {
  /** Position in the file's `features` array, from 0. */
  index: number;
  reason: string;
}

export interface ImportProgress {
  features: number;
  written: number;
  skipped: number;
  bytesRead: number;
  totalBytes: number;
  elapsedMs: number;
}

export interface ImportSummary {
  features: number;
  inserted: number;
  updated: number;
  /** Already imported with the same data: left untouched. */
  unchanged: number;
  /** Features repeating an earlier place_id of the same batch (the last one wins). */
  duplicates: number;
  skipped: number;
  /** Geofence crossings the moved places recorded (docs/API.md, Geofences). */
  crossings: number;
  /** The first skipped features (all of them are reported through `onSkip`). */
  skippedSample: SkippedFeature[];
  bytes: number;
  elapsedMs: number;
}

export interface ImportOptions {
  batchSize?: number;
  /** Provider of features that do not name one. */
  defaultProvider?: string;
  onSkip?: (skipped: SkippedFeature) => void;
  /** After every chunk of the file. */
  onProgress?: (progress: ImportProgress) => void;
  /** Read size; also bounds the memory taken by the file. */
  chunkBytes?: number;
}

const SAMPLE = 100;
/** SQLSTATE classes of errors caused by the data of one row (22 data exception, 23 constraint, 54 limit). */
const DATA_ERROR = /^(22|23(?!503)|54)/; // not 23503: a foreign key (the organization gone) stops the import

type Entry = { index: number; row: PlaceTwinRow };

/**
 * Imports a GeoJSON FeatureCollection file of places as public supplier twins of an organization.
 * Streams the file (one chunk and at most two batches in memory), writes batches as single
 * upserts keyed on (organization, place_id), and overlaps reading the next batch with the database
 * writing the previous one, never with two statements at once: one connection is enough (the
 * embedded database has one).
 */
export class PlaceImporter {
  private readonly repository: PlacesRepository;
  private readonly twins: TwinsRepository;

  /** `channel`: the event bus's NOTIFY channel (or null), on which the import announces the geofence crossings it records. */
  constructor(
    sql: Sql,
    private readonly channel: string | null = null,
  ) {
    this.repository = new PlacesRepository(sql);
    this.twins = new TwinsRepository(sql);
  }

  async importFile(organizationId: string, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
    const batchSize = options.batchSize ?? 2000;
    const defaultProvider = options.defaultProvider ?? 'geojson';
    if (!isUuid(organizationId) || !(await this.repository.organizationExists(organizationId.toLowerCase()))) {
      throw new PlaceImportError(`organization ${organizationId} does not exist`);
    }
    const totalBytes = await stat(file).then(
      (info) => info.size,
      (error: NodeJS.ErrnoException) => {
        throw new PlaceImportError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
      },
    );

    const started = Date.now();
    const summary: ImportSummary = { features: 0, inserted: 0, updated: 0, unchanged: 0, duplicates: 0, skipped: 0, crossings: 0, skippedSample: [], bytes: totalBytes, elapsedMs: 0 };
    const skip = (skipped: SkippedFeature) => {
      summary.skipped++;
      if (summary.skippedSample.length < SAMPLE) summary.skippedSample.push(skipped);
      options.onSkip?.(skipped);
    };

    const write = async (entries: Entry[]): Promise<void> => {
      try {
        this.count(summary, entries.length, await this.twins.upsertPlaces(organizationId, entries.map((entry) => entry.row), this.channel));
      } catch (error) {
        if (!isDataError(error)) throw error;
        // One bad row fails the whole statement: find it (them) row by row, import the rest.
        for (const entry of entries) {
          try {
            this.count(summary, 1, await this.twins.upsertPlaces(organizationId, [entry.row], this.channel));
          } catch (rowError) {
            if (!isDataError(rowError)) throw rowError;
            skip({ index: entry.index, reason: `refused by the database: ${(rowError as Error).message}` });
          }
        }
      }
    };

    let batch = new Map<string, Entry>();
    let inFlight: Promise<{ error?: unknown }> | undefined;
    const settle = async () => {
      const outcome = await inFlight;
      inFlight = undefined;
      if (outcome?.error) throw outcome.error;
    };
    const flush = async () => {
      await settle();
      if (batch.size === 0) return;
      const entries = [...batch.values()];
      batch = new Map();
      inFlight = write(entries).then(
        () => ({}),
        (error: unknown) => ({ error }),
      );
    };

    const scanner = new FeatureCollectionScanner();
    const stream = createReadStream(file, { highWaterMark: options.chunkBytes ?? 1024 * 1024 });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        for (const scanned of scanner.push(chunk)) {
          summary.features++;
          if ('error' in scanned) {
            skip({ index: scanned.index, reason: scanned.error });
            continue;
          }
          const mapped = mapFeature(scanned.value, { defaultProvider });
          if ('error' in mapped) {
            skip({ index: scanned.index, reason: mapped.error });
            continue;
          }
          const key = mapped.row.place_id;
          if (batch.delete(key)) summary.duplicates++;
          batch.set(key, { index: scanned.index, row: mapped.row });
          if (batch.size >= batchSize) await flush();
        }
        options.onProgress?.({
          features: summary.features,
          written: summary.inserted + summary.updated + summary.unchanged,
          skipped: summary.skipped,
          bytesRead: scanner.position,
          totalBytes,
          elapsedMs: Date.now() - started,
        });
      }
      scanner.end();
      await flush();
      await settle();
    } catch (error) {
      // Never leave a statement running on the connection behind the caller's back.
      await inFlight;
      stream.destroy();
      throw error;
    }
    summary.elapsedMs = Date.now() - started;
    return summary;
  }

  private count(summary: ImportSummary, sent: number, result: { inserted: number; updated: number; crossings: number }): void {
    summary.inserted += result.inserted;
    summary.crossings += result.crossings;
    summary.updated += result.updated;
    summary.unchanged += sent - result.inserted - result.updated;
  }
}

function isDataError(error: unknown): boolean {
  return anyCause(error, ({ code }) => typeof code === 'string' && DATA_ERROR.test(code));
}
