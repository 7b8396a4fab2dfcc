import type { RuntimeInstanceRepository } from '#database';
import { isGlobalAdmin, type Principal } from '#token-binding';
import { pageBody, pageWindow } from '../platform/cursor.js';
import { toInstanceView, type InstancePage } from './instance.view.js';
import type { ListInstancesQuery } from './list-instances.query.js';

/**
 * The host whose instances `principal` reads (DESIGN 16): a global admin (no `host` claim) the one it asks
 * for, or every host; anyone else only its own (the guard already refused a query naming another host).
 */
export function registryHostOf(principal: Principal, requested: string | undefined): string | undefined {
  if (isGlobalAdmin(principal, 'registry:read')) return requested;
  // Without a host such a caller is no global admin (the route's capability forbids it): '' names no host.
  return principal.host ?? '';
}

/**
 * One page of the shared registry, as both the controller's `/instances` and the api's `/registry/instances`
 * answer it: from an offset or after a cursor's instance (DESIGN 4.2), so either process continues the other's.
 */
export async function listInstances(
  instances: RuntimeInstanceRepository,
  principal: Principal,
  query: ListInstancesQuery,
): Promise<InstancePage> {
  const filter = {
    hostId: registryHostOf(principal, query.hostId),
    serviceId: query.serviceId,
    envTag: query.envTag,
    status: query.status,
  };
  const scope = { list: 'instances', filter };
  const window = pageWindow(query, scope, instances.keyset.accepts);
  const page = await instances.page(filter, window);
  return pageBody(window, scope, page, 'instances', page.rows.map(toInstanceView));
}
