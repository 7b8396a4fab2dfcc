import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { InstancePage, ListInstancesQuery } from '#registry';
import { Authenticated, SCOPE_ADMIN } from '#token-binding';
import { RegistryChangesService } from './registry-changes.service.js';
import { RegistryService } from './registry.service.js';

/** The shared registry for the console: same items as the controller's `/instances` (DESIGN 13). */
@ApiTags('registry')
@Controller('registry')
export class RegistryController {
  constructor(
    private readonly registry: RegistryService,
    private readonly changes: RegistryChangesService,
  ) {}

  @Get('instances')
  @Authenticated(SCOPE_ADMIN)
  @ApiOperation({ summary: 'Registered runtime instances of every host, as every controller replica recorded them' })
  @ApiOkResponse({ type: InstancePage })
  @ApiResponse(problemResponse(400, 'Invalid, unknown or repeated query parameter'))
  list(@Query() query: ListInstancesQuery): Promise<InstancePage> {
    return this.registry.list(query);
  }

  @Get('changes')
  @Authenticated(SCOPE_ADMIN)
  @ApiOperation({
    summary: 'Registry changes as an event stream (ready, then change per changed instance, resync after a gap)',
    description:
      'Read with fetch and the Authorization header. A change event carries {hostId, serviceId}: re-read ' +
      '/registry/instances. There is no replay: after reconnecting, re-read the list.',
  })
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'text/event-stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiResponse(problemResponse(503, 'Too many open streams, or the database is unavailable'))
  async stream(@Res() reply: FastifyReply): Promise<void> {
    const stream = await this.changes.open();
    await reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-store')
      // nginx and similar proxies must pass each event through at once.
      .header('x-accel-buffering', 'no')
      .send(stream);
  }
}
