import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { absoluteRequestUrl } from '../http/request-url.js';
import { buildEnvelope } from './envelope.js';
import { JSON_API_MEDIA_TYPE } from './resource.js';

/**
 * Wraps what handlers return in the JSON:API envelope and labels it `application/vnd.api+json`
 * (unless the handler chose another media type, as the geo listing does). Handlers therefore return
 * resources, lists or pages and never touch the envelope themselves.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    return next.handle().pipe(
      map((result) => {
        if (result === undefined || reply.statusCode === 204) return undefined;
        if (!reply.hasHeader('content-type')) reply.header('content-type', JSON_API_MEDIA_TYPE);
        return buildEnvelope(result, () => absoluteRequestUrl(request, this.config.publicUrl));
      }),
    );
  }
}
