import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/route-access.js';
import { RawBody } from '../common/json-api/envelope.js';
import { JSON_API_MEDIA_TYPE } from '../common/json-api/resource.js';
import { ApiDocument } from '../common/openapi/docs.js';
import { Database } from '../database/database.js';
import { HEALTH_DOWN, HEALTH_UP } from './health.openapi.js';

const NO_STORE = { 'Cache-Control': { description: '`no-store`', schema: { type: 'string' } } };

@ApiTags('operations')
@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly database: Database) {}

  @Get()
  @ApiOperation({ summary: 'Liveness and database reachability', description: 'Public. 200 when the database answers, 503 otherwise.' })
  @ApiDocument(200, HEALTH_UP, { description: 'The database answers.', headers: NO_STORE })
  @ApiResponse({
    status: 503,
    description: 'The database does not answer (the health body), or the service is shutting down (`shutting_down`, an errors document).',
    headers: { ...NO_STORE, 'Retry-After': { description: 'On `shutting_down`: 1.', schema: { type: 'integer' } } },
    content: { [JSON_API_MEDIA_TYPE]: HEALTH_DOWN },
  })
  async health(@Res({ passthrough: true }) reply: FastifyReply) {
    const up = await this.database.ping();
    if (!up) reply.status(503);
    reply.header('cache-control', 'no-store');
    return new RawBody({ status: up ? 'ok' : 'unavailable', database: { status: up ? 'up' : 'down', kind: this.database.kind } });
  }
}
