import { Controller, Get, Query } from '@nestjs/common';
import { Authenticated, SCOPE_ADMIN } from '#token-binding';
import { ListInstancesQuery } from './dto/list-instances.query.js';
import { RegistryService } from './registry.service.js';
import type { InstancePage } from './runtime-instance.view.js';

/** `GET /instances` on the controller's HTTP port: the registry, for operators (DESIGN 8). */
@Controller('instances')
export class InstancesController {
  constructor(private readonly registry: RegistryService) {}

  @Get()
  @Authenticated(SCOPE_ADMIN)
  list(@Query() query: ListInstancesQuery): Promise<InstancePage> {
    return this.registry.list(query);
  }
}
