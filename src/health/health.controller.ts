import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/route-access.js';
import { RawBody } from '../common/json-api/envelope.js';
import { Database } from '../database/database.js';

@ApiTags('operations')
@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly database: Database) {}

  @Get()
  @ApiOperation({ summary: 'Liveness and database reachability', description: 'Public. 200 when the database answers, 503 otherwise.' })
  @ApiOkResponse({ schema: { example: { status: 'ok', database: { status: 'up', kind: 'postgres' } } } })
  @ApiServiceUnavailableResponse({ schema: { example: { status: 'unavailable', database: { status: 'down', kind: 'postgres' } } } })
  async health(@Res({ passthrough: true }) reply: FastifyReply) {
    const up = await this.database.ping();
    if (!up) reply.status(503);
    reply.header('cache-control', 'no-store');
    return new RawBody({ status: up ? 'ok' : 'unavailable', database: { status: up ? 'up' : 'down', kind: this.database.kind } });
  }
}
