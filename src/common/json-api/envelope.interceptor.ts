import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { bodyEtag, ifNoneMatchHits } from '../http/conditional.js';
import { absoluteRequestUrl } from '../http/request-url.js';
import { buildEnvelope, Conditional, Tagged } from './envelope.js';
import { JSON_API_MEDIA_TYPE } from './resource.js';

/**
 * Bodies past this size leave as bytes: encoded to UTF-8 once, here (the tag hashes those bytes), instead
 * of twice (the hash, then the socket's own conversion, which is the slower one on large pages).
 * Smaller ones stay text, which the socket writes through a stack buffer.
 */
const BYTES_FROM = 64 * 1024;

/**
 * Wraps what handlers return in the JSON:API envelope and labels it `application/vnd.api+json`
 * (unless the handler chose another media type, as the geo listing does). Handlers therefore return
 * resources, lists or pages and never touch the envelope themselves.
 *
 * It also answers conditional GETs (http/conditional.ts): every 200 to a GET carries an ETag (the
 * result's own when it is `Tagged`, else a hash of the body), and a request whose If-None-Match
 * matches gets a 304 without a body; a `Conditional` result is only built when it does not match.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    // What is emitted may be a promise (a Conditional's answer): Nest awaits the handler's last value
    // before replying, which settles it. (A switchMap to it cost an inner subscription per request.)
    return next.handle().pipe(map((result) => (result instanceof Conditional ? this.answerConditional(request, reply, result) : this.answer(request, reply, result))));
  }

  /** A Conditional: its version first, and its body only when the client's copy is not current. */
  private async answerConditional(request: FastifyRequest, reply: FastifyReply, result: Conditional<unknown>): Promise<unknown> {
    const ifNoneMatch = ifNoneMatchOf(request);
    const current = ifNoneMatch === undefined ? undefined : await result.etag();
    if (current !== undefined && ifNoneMatchHits(ifNoneMatch, current)) return notModified(reply, current);
    return this.answer(request, reply, await result.build());
  }

  private answer(request: FastifyRequest, reply: FastifyReply, result: unknown): unknown {
    if (result === undefined || reply.statusCode === 204) return undefined;
    if (!reply.hasHeader('content-type')) reply.header('content-type', JSON_API_MEDIA_TYPE);
    const envelope = buildEnvelope(result, () => absoluteRequestUrl(request, this.config.publicUrl));
    const tag = result instanceof Tagged ? result.etag : undefined;
    // Writes answer with their resource's tag; a handler that set its own (image bytes) keeps it.
    if (request.method !== 'GET' || reply.statusCode !== 200 || reply.hasHeader('etag')) {
      if (tag) reply.header('etag', tag);
      return envelope;
    }
    // The text is what would be sent anyway; hashing it is the validator of answers without a version.
    const text = typeof envelope === 'string' || Buffer.isBuffer(envelope) ? envelope : JSON.stringify(envelope);
    const body = typeof text === 'string' && text.length > BYTES_FROM ? Buffer.from(text, 'utf8') : text;
    const etag = tag ?? bodyEtag(body);
    if (ifNoneMatchHits(ifNoneMatchOf(request), etag)) return notModified(reply, etag);
    reply.header('etag', etag);
    return body;
  }
}

/** If-None-Match, which only GETs are answered by. */
const ifNoneMatchOf = (request: FastifyRequest): string | undefined => (request.method === 'GET' ? request.headers['if-none-match'] : undefined);

function notModified(reply: FastifyReply, etag: string): undefined {
  reply.status(304).header('etag', etag);
  reply.removeHeader('content-type');
  return undefined;
}
