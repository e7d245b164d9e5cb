import compress from '@fastify/compress';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { constants } from 'node:zlib';
import { codedEtag } from './conditional.js';

/** The answers worth compressing: JSON documents (JSON:API, GeoJSON, plain JSON) and vector tiles (protocol buffers: half their size in gzip). Image bytes already are compressed; event streams must flush message by message. */
const COMPRESSIBLE = /^application\/(?:vnd\.api\+json|geo\+json|json|vnd\.mapbox-vector-tile)(?:\s*;|$)/i;

/** Below this an answer goes as it is: the coding would save less than it costs. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Up to this size an answer is compressed in one synchronous call; bigger ones (map listings of
 * megabytes) stream through zlib on the thread pool, so one of them never holds the event loop for
 * long. The plugin's default on two cores is 8 KiB, which sent ordinary list pages down the stream path
 * at several times the CPU of one call (docs/PERFORMANCE.md).
 */
const SYNC_COMPRESSION_MAX_BYTES = 256 * 1024;

/**
 * `br` and `gzip` for JSON answers over 1 KiB (@fastify/compress), at levels chosen for an API rather
 * than for static files: brotli quality 4 and gzip level 6 (bench: CPU per request, docs/PERFORMANCE.md).
 * Request bodies are not decompressed: the body limits stay limits of what is read.
 *
 * After compression, per route: a compressed answer's strong ETag names its coding (conditional.ts),
 * and every JSON answer says `Vary: Accept-Encoding`, compressed or not, so a cache never hands an
 * answer in one coding to a client that asked for another.
 */
export async function registerCompression(fastify: FastifyInstance): Promise<void> {
  await fastify.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    syncThreshold: SYNC_COMPRESSION_MAX_BYTES,
    customTypes: COMPRESSIBLE,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: 6 },
    globalDecompression: false,
  });
  // Added after the plugin's own onRoute hook, so this runs after its onSend on every route.
  fastify.addHook('onRoute', (route) => {
    route.onSend = [route.onSend ?? []].flat().concat(afterCompression);
  });
}

const afterCompression: onSendHookHandler = (_request, reply, payload, done) => {
  const contentType = reply.getHeader('content-type');
  const coding = reply.getHeader('content-encoding');
  // The plugin also compresses text it knows to be compressible (the map page's HTML, CSS, scripts).
  const compressed = typeof coding === 'string' && coding !== 'identity';
  // A 304 says what the 200 would have said (RFC 9110 §15.4.5), Vary included.
  if ((typeof contentType === 'string' && COMPRESSIBLE.test(contentType)) || reply.statusCode === 304 || compressed) {
    const vary = String(reply.getHeader('vary') ?? '');
    reply.header('vary', /\baccept-encoding\b/i.test(vary) ? vary.replace(/\baccept-encoding\b/i, 'Accept-Encoding') : vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
    const etag = reply.getHeader('etag');
    if (compressed && typeof etag === 'string') reply.header('etag', codedEtag(etag, coding));
  }
  done(null, payload);
};
