/**
 * Recognising the accepted image formats from their bytes and reading their pixel size from the
 * headers, without decoding pixels. Pure functions: the images service decides what a failure means
 * on the wire.
 */
export const IMAGE_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type ImageContentType = (typeof IMAGE_CONTENT_TYPES)[number];

export interface ImageDimensions {
  width: number;
  height: number;
}

export const isImageContentType = (value: string): value is ImageContentType => (IMAGE_CONTENT_TYPES as readonly string[]).includes(value);

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, index) => bytes[at + index] === byte);

const ascii = (bytes: Uint8Array, at: number, length: number) =>
  bytes.length >= at + length ? String.fromCharCode(...bytes.subarray(at, at + length)) : '';

/** The format the magic bytes announce, or undefined for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageContentType | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  const gif = ascii(bytes, 0, 6);
  if (gif === 'GIF87a' || gif === 'GIF89a') return 'image/gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return 'image/webp';
  return undefined;
}

/** Why bytes were refused, for the error detail. */
export class ImageFormatError extends Error {}

/**
 * The width and height of an image of a known format, read from its headers. Throws
 * ImageFormatError when the header is truncated or malformed, or says the image has no pixels.
 */
export function readImageDimensions(type: ImageContentType, bytes: Uint8Array): ImageDimensions {
  const dimensions = READERS[type](bytes);
  if (!Number.isInteger(dimensions.width) || !Number.isInteger(dimensions.height) || dimensions.width < 1 || dimensions.height < 1) {
    throw new ImageFormatError(`The ${type} header declares an empty image.`);
  }
  return dimensions;
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function need(bytes: Uint8Array, length: number, what: string): void {
  if (bytes.length < length) throw new ImageFormatError(`The ${what} header is truncated.`);
}

/** PNG: the signature, then the IHDR chunk (length 13) with big-endian width and height. */
function png(bytes: Uint8Array): ImageDimensions {
  need(bytes, 24, 'PNG');
  if (!startsWith(bytes, PNG_SIGNATURE)) throw new ImageFormatError('Not a PNG signature.');
  const data = view(bytes);
  if (data.getUint32(8) !== 13 || ascii(bytes, 12, 4) !== 'IHDR') throw new ImageFormatError('The PNG does not start with an IHDR chunk.');
  return { width: data.getUint32(16), height: data.getUint32(20) };
}

/** GIF: `GIF87a`/`GIF89a`, then the logical screen's little-endian width and height. */
function gif(bytes: Uint8Array): ImageDimensions {
  need(bytes, 10, 'GIF');
  const signature = ascii(bytes, 0, 6);
  if (signature !== 'GIF87a' && signature !== 'GIF89a') throw new ImageFormatError('Not a GIF signature.');
  const data = view(bytes);
  return { width: data.getUint16(6, true), height: data.getUint16(8, true) };
}

/** Start-of-frame markers: C0–CF except DHT (C4), JPG (C8) and DAC (CC). */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** JPEG: walks the marker segments after SOI to the first SOFn, which holds height then width. */
function jpeg(bytes: Uint8Array): ImageDimensions {
  if (!startsWith(bytes, [0xff, 0xd8])) throw new ImageFormatError('Not a JPEG (no SOI marker).');
  const data = view(bytes);
  let at = 2;
  while (at < bytes.length) {
    if (bytes[at] !== 0xff) throw new ImageFormatError(`Malformed JPEG: expected a marker at byte ${at}.`);
    // Any number of 0xFF fill bytes may precede a marker.
    while (at < bytes.length && bytes[at] === 0xff) at++;
    if (at >= bytes.length) break;
    const marker = bytes[at++];
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    if (marker === 0xd9 || marker === 0xda) throw new ImageFormatError('The JPEG has no frame header before its image data.');
    need(bytes, at + 2, 'JPEG');
    const length = data.getUint16(at);
    if (length < 2) throw new ImageFormatError('Malformed JPEG segment length.');
    if (isStartOfFrame(marker)) {
      need(bytes, at + 7, 'JPEG');
      return { height: data.getUint16(at + 3), width: data.getUint16(at + 5) };
    }
    at += length;
  }
  throw new ImageFormatError('The JPEG header is truncated.');
}

/** WebP: a RIFF container whose first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webp(bytes: Uint8Array): ImageDimensions {
  need(bytes, 16, 'WebP');
  if (ascii(bytes, 0, 4) !== 'RIFF' || ascii(bytes, 8, 4) !== 'WEBP') throw new ImageFormatError('Not a WebP RIFF container.');
  const data = view(bytes);
  const chunk = ascii(bytes, 12, 4);
  switch (chunk) {
    case 'VP8 ': {
      // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height (2 scale bits each).
      need(bytes, 30, 'WebP VP8');
      if (!startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) throw new ImageFormatError('The WebP VP8 frame has no start code.');
      return { width: data.getUint16(26, true) & 0x3fff, height: data.getUint16(28, true) & 0x3fff };
    }
    case 'VP8L': {
      // Signature 0x2F, then 14 bits width-1 and 14 bits height-1, little-endian.
      need(bytes, 25, 'WebP VP8L');
      if (bytes[20] !== 0x2f) throw new ImageFormatError('The WebP VP8L chunk has no signature.');
      const bits = data.getUint32(21, true);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    case 'VP8X': {
      // Flags (1 byte), reserved (3), then 24-bit canvas width-1 and height-1, little-endian.
      need(bytes, 30, 'WebP VP8X');
      const uint24 = (at: number) => bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
      return { width: uint24(24) + 1, height: uint24(27) + 1 };
    }
    default:
      throw new ImageFormatError(`Unknown WebP chunk "${chunk}".`);
  }
}

const READERS: Record<ImageContentType, (bytes: Uint8Array) => ImageDimensions> = {
  'image/png': png,
  'image/gif': gif,
  'image/jpeg': jpeg,
  'image/webp': webp,
};
