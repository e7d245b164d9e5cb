import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/route-access.js';
import { RawBody } from '../common/json-api/envelope.js';
import { JSON_API_MEDIA_TYPE } from '../common/json-api/resource.js';
import { ApiDocument } from '../common/openapi/docs.js';
import { Database } from '../database/database.js';
import { HEALTH_DOWN, HEALTH_UP, LIVE, NOT_READY, READY } from './health.openapi.js';

const NO_STORE = { 'Cache-Control': { description: '`no-store`', schema: { type: 'string' } } };
const SHUTTING_DOWN_HEADERS = { ...NO_STORE, 'Retry-After': { description: 'On `shutting_down`: 1.', schema: { type: 'integer' } } };

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
    headers: SHUTTING_DOWN_HEADERS,
    content: { [JSON_API_MEDIA_TYPE]: HEALTH_DOWN },
  })
  async health(@Res({ passthrough: true }) reply: FastifyReply) {
    const up = await this.database.ping();
    if (!up) reply.status(503);
    reply.header('cache-control', 'no-store');
    return new RawBody({ status: up ? 'ok' : 'unavailable', database: { status: up ? 'up' : 'down', kind: this.database.kind } });
  }

  @Get('live')
  @ApiOperation({
    summary: 'Liveness probe',
    description: 'Public. 200 as long as the process answers HTTP; the database is not consulted, so an outage does not get healthy replicas restarted. Use it as the orchestrator\'s liveness probe.',
  })
  @ApiDocument(200, LIVE, { description: 'The process answers.', headers: NO_STORE })
  @ApiResponse({
    status: 503,
    description: 'The service is shutting down (`shutting_down`, an errors document).',
    headers: SHUTTING_DOWN_HEADERS,
    content: { [JSON_API_MEDIA_TYPE]: { schema: HEALTH_DOWN.schema.oneOf[1], example: HEALTH_DOWN.examples.shuttingDown.value } },
  })
  live(@Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('cache-control', 'no-store');
    return new RawBody({ status: 'ok' });
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness probe',
    description:
      'Public. 200 when the database answers and every migration of this build is applied; 503 otherwise. Use it as the orchestrator\'s readiness probe: a replica that answers 503 is taken out of rotation, not restarted.',
  })
  @ApiDocument(200, READY, { description: 'Ready for traffic.', headers: NO_STORE })
  @ApiResponse({
    status: 503,
    description: 'The database does not answer or a migration is pending (the readiness body), or the service is shutting down (`shutting_down`, an errors document).',
    headers: SHUTTING_DOWN_HEADERS,
    content: { [JSON_API_MEDIA_TYPE]: NOT_READY },
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const { database, migrations } = await this.database.readiness();
    const ok = database === 'up' && migrations === 'applied';
    if (!ok) reply.status(503);
    reply.header('cache-control', 'no-store');
    return new RawBody({ status: ok ? 'ok' : 'unavailable', database: { status: database, kind: this.database.kind }, migrations: { status: migrations } });
  }
}
