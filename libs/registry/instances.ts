import type { RuntimeInstanceRepository } from '#database';
import { toInstanceView, type InstancePage } from './instance.view.js';
import type { ListInstancesQuery } from './list-instances.query.js';

/** One page of the shared registry, as both the controller's `/instances` and the api's `/registry/instances` answer it. */
export async function listInstances(
  instances: RuntimeInstanceRepository,
  query: ListInstancesQuery,
): Promise<InstancePage> {
  const [rows, total] = await instances.page(query, query.offset, query.limit);
  return { total, instances: rows.map(toInstanceView) };
}
