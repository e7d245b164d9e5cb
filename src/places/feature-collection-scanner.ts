/**
 * Incremental reader of a GeoJSON FeatureCollection: fed the file chunk by chunk, it hands back each
 * element of the top-level `features` array as soon as its last byte has arrived, parsed with the
 * native JSON.parse. Whatever the layout (one feature per line, pretty-printed, minified on a single
 * line, other members such as `bbox`/`crs` before or after `features`), memory holds one chunk plus
 * the feature being read.
 *
 * It works on bytes: in UTF-8 the bytes of `"`, `\`, brackets and commas never occur inside a
 * multi-byte character, so structure can be tracked without decoding. It tracks the structure it
 * needs (nesting, strings and escapes, members of the root object); the content of each feature is
 * checked by JSON.parse, and a feature that is not valid JSON is reported on its own, by index.
 */

export type ScannedFeature = { index: number; value: unknown } | { index: number; error: string };

export class GeoJsonFormatError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

type Capture = 'key' | 'type' | 'feature' | undefined;
type ElementKind = 'container' | 'string' | 'scalar';

export class FeatureCollectionScanner {
  /** Bytes consumed before the current chunk. */
  private offset = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private rootOpened = false;
  private rootClosed = false;
  /** Inside the root object: the next string is a member name. */
  private expectKey = false;
  private lastKey: string | undefined;
  private featuresOpen = false;
  private featuresSeen = false;
  private element: ElementKind | undefined;
  private featureIndex = 0;

  private capture: Capture;
  private captureStart = 0;
  private captureParts: Buffer[] = [];
  private captureBytes = 0;

  constructor(private readonly maxFeatureBytes = 64 * 1024 * 1024) {}

  /** Bytes read so far. */
  get position(): number {
    return this.offset;
  }

  push(chunk: Buffer): ScannedFeature[] {
    const out: ScannedFeature[] = [];
    let i = 0;
    const length = chunk.length;
    let nextQuote = -2;
    let nextBackslash = -2;
    this.captureStart = 0;

    while (i < length) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        if (nextQuote !== -1 && nextQuote < i) nextQuote = chunk.indexOf(QUOTE, i);
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = chunk.indexOf(BACKSLASH, i);
        if (nextBackslash !== -1 && (nextQuote === -1 || nextBackslash < nextQuote)) {
          i = nextBackslash + 1;
          if (i < length) i++;
          else this.escaped = true;
          continue;
        }
        if (nextQuote === -1) {
          i = length;
          break;
        }
        i = nextQuote + 1;
        this.inString = false;
        if (this.capture === 'key' || this.capture === 'type') {
          const text = this.endCapture(chunk, i).toString('utf8');
          let value: string;
          try {
            value = JSON.parse(text) as string;
          } catch {
            throw this.fail(`invalid string ${text.slice(0, 40)}`, i);
          }
          if (this.capture === 'key') {
            this.lastKey = value;
            this.expectKey = false;
          } else {
            if (value !== 'FeatureCollection') throw this.fail(`"type" is "${value}", not "FeatureCollection"`, i);
          }
          this.capture = undefined;
        } else if (this.element === 'string' && this.depth === 2) {
          out.push(this.endFeature(chunk, i));
        }
        continue;
      }

      const byte = chunk[i];
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) {
        if (this.element === 'scalar') out.push(this.endFeature(chunk, i));
        i++;
        continue;
      }
      if (this.rootClosed) throw this.fail('unexpected data after the FeatureCollection', i);

      switch (byte) {
        case QUOTE:
          if (this.depth === 0) throw this.fail('the file is not a JSON object', i);
          this.inString = true;
          if (this.depth === 1) {
            if (this.expectKey) this.startCapture('key', i);
            else if (this.lastKey === 'type') this.startCapture('type', i);
            else if (this.lastKey === 'features') throw this.fail('"features" is not an array', i);
          } else if (this.depth === 2 && this.featuresOpen && !this.element) {
            this.startFeature('string', i);
          }
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.depth === 0) {
            if (this.rootOpened || byte !== OPEN_OBJECT) throw this.fail('the file is not a JSON object', i);
            this.rootOpened = true;
            this.expectKey = true;
          } else if (this.depth === 1 && this.lastKey === 'features' && !this.expectKey) {
            if (byte !== OPEN_ARRAY) throw this.fail('"features" is not an array', i);
            if (this.featuresSeen) throw this.fail('more than one "features" member', i);
            this.featuresOpen = true;
            this.featuresSeen = true;
          } else if (this.depth === 2 && this.featuresOpen && !this.element) {
            this.startFeature('container', i);
          }
          this.depth++;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.element === 'scalar') out.push(this.endFeature(chunk, i));
          if (this.depth === 0) throw this.fail(`unbalanced "${String.fromCharCode(byte)}"`, i);
          this.depth--;
          if (this.depth === 0) this.rootClosed = true;
          else if (this.depth === 1 && this.featuresOpen) this.featuresOpen = false;
          else if (this.depth === 2 && this.element === 'container') out.push(this.endFeature(chunk, i + 1));
          break;
        case COMMA:
          if (this.element === 'scalar') out.push(this.endFeature(chunk, i));
          if (this.depth === 1) this.expectKey = true;
          break;
        case COLON:
          break;
        default:
          if (this.depth === 0 && this.offset + i < 3 && byte === UTF8_BOM[this.offset + i]) break;
          if (this.depth === 0) throw this.fail('the file is not a JSON object', i);
          if (this.depth === 1 && this.lastKey === 'features' && !this.expectKey) throw this.fail('"features" is not an array', i);
          if (this.depth === 2 && this.featuresOpen && !this.element) this.startFeature('scalar', i);
      }
      i++;
    }

    if (this.capture) {
      const rest = chunk.subarray(this.captureStart);
      this.captureParts.push(rest);
      this.captureBytes += rest.length;
      if (this.captureBytes > this.maxFeatureBytes) throw this.fail(`a feature is larger than ${this.maxFeatureBytes} bytes`, length);
    }
    this.offset += length;
    return out;
  }

  /** Call after the last chunk: throws when the file ended early or had no `features` array. */
  end(): void {
    if (!this.rootOpened) throw new GeoJsonFormatError('the file is empty: expected a GeoJSON FeatureCollection');
    if (!this.rootClosed || this.inString) {
      throw new GeoJsonFormatError(`the file ends inside the FeatureCollection at byte ${this.offset} (truncated?)`);
    }
    if (!this.featuresSeen) throw new GeoJsonFormatError('the FeatureCollection has no "features" array');
  }

  private startCapture(kind: Capture, at: number): void {
    this.capture = kind;
    this.captureStart = at;
    this.captureParts = [];
    this.captureBytes = 0;
  }

  private endCapture(chunk: Buffer, end: number): Buffer {
    const last = chunk.subarray(this.captureStart, end);
    const bytes = this.captureParts.length === 0 ? last : Buffer.concat([...this.captureParts, last]);
    this.captureParts = [];
    this.captureBytes = 0;
    return bytes;
  }

  private startFeature(kind: ElementKind, at: number): void {
    this.element = kind;
    this.startCapture('feature', at);
  }

  private endFeature(chunk: Buffer, end: number): ScannedFeature {
    const bytes = this.endCapture(chunk, end);
    this.capture = undefined;
    this.element = undefined;
    const index = this.featureIndex++;
    try {
      return { index, value: JSON.parse(bytes.toString('utf8')) };
    } catch (error) {
      return { index, error: `not valid JSON (${(error as Error).message})` };
    }
  }

  private fail(message: string, at: number): GeoJsonFormatError {
    return new GeoJsonFormatError(`${message} (at byte ${this.offset + at})`);
  }
}
