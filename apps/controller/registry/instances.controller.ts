import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { problemResponse } from '#platform';
import { InstancePage, ListInstancesQuery } from '#registry';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { RegistryService } from './registry.service.js';

/** `GET /instances` on the controller's HTTP port: the registry, for operators (DESIGN 8). */
@ApiTags('instances')
@Controller('instances')
export class InstancesController {
  constructor(private readonly registry: RegistryService) {}

  @Get()
  @Access('registry:read', 'own-host', { hostIn: [{ query: 'hostId' }] })
  @ApiOperation({
    summary: "Registered runtime instances (a host-bound token: its host's only), by host, service, env, address, port",
  })
  @ApiOkResponse({ type: InstancePage })
  @ApiResponse(problemResponse(400, 'Invalid, unknown or repeated query parameter'))
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListInstancesQuery): Promise<InstancePage> {
    return this.registry.list(principal, query);
  }
}
