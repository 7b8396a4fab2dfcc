import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { InstancePage, ListInstancesQuery, registryHostOf } from '#registry';
import { Access, CurrentPrincipal, TokenVerifier, type Principal } from '#token-binding';
import { RegistryChangesService } from './registry-changes.service.js';
import { RegistryService } from './registry.service.js';

/** The shared registry for the console: same items as the controller's `/instances` (DESIGN 13). */
@ApiTags('registry')
@Controller('registry')
export class RegistryController {
  constructor(
    private readonly registry: RegistryService,
    private readonly changes: RegistryChangesService,
    private readonly verifier: TokenVerifier,
  ) {}

  @Get('instances')
  @Access('registry:read', 'own-host', { hostIn: [{ query: 'hostId' }] })
  @ApiOperation({
    summary:
      "Registered runtime instances (a host-bound token: its host's only), as every controller replica recorded them",
  })
  @ApiOkResponse({ type: InstancePage })
  @ApiResponse(problemResponse(400, 'Invalid, unknown or repeated query parameter'))
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListInstancesQuery): Promise<InstancePage> {
    return this.registry.list(principal, query);
  }

  @Get('changes')
  @Access('registry:read', 'own-host')
  @ApiOperation({
    summary: 'Registry changes as an event stream (ready, then change per changed instance, resync after a gap)',
    description:
      'Read with fetch and the Authorization header. A change event carries {hostId, serviceId}: re-read ' +
      '/registry/instances. There is no replay: after reconnecting, re-read the list. The stream ends with an ' +
      'expired event when its token stops being accepted (exp plus the clock tolerance): reconnect with a newer token.',
  })
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'text/event-stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiResponse(problemResponse(503, 'Too many open streams, or the database is unavailable'))
  async stream(@CurrentPrincipal() principal: Principal, @Res() reply: FastifyReply): Promise<void> {
    const until = acceptedUntilMs(principal, this.verifier.policy.clockToleranceSec);
    const stream = await this.changes.open(until, registryHostOf(principal, undefined));
    await reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-store')
      // nginx and similar proxies must pass each event through at once.
      .header('x-accel-buffering', 'no')
      .send(stream);
  }
}

/**
 * When the verifier stops accepting this token: `exp` plus the clock tolerance (DESIGN 8). The same moment a
 * reconnect with the same token is refused, so a client never loops on streams that end at once.
 */
export function acceptedUntilMs(principal: Principal, clockToleranceSec: number): number {
  const exp = principal.claims.exp;
  // Verification requires `exp`; without one (a wiring fault) the stream ends at once rather than never.
  return typeof exp === 'number' ? (exp + clockToleranceSec) * 1000 : 0;
}
