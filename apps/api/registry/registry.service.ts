import { Injectable } from '@nestjs/common';
import { RuntimeInstanceRepository } from '#database';
import { listInstances, type InstancePage, type ListInstancesQuery } from '#registry';
import type { Principal } from '#token-binding';

/** The registry every controller replica writes, read by the api for the console (DESIGN 13). */
@Injectable()
export class RegistryService {
  constructor(private readonly instances: RuntimeInstanceRepository) {}

  list(principal: Principal, query: ListInstancesQuery): Promise<InstancePage> {
    return listInstances(this.instances, principal, query);
  }
}
