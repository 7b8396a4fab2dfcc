import { type LayerAddress, type Stored } from '../entities/config-types.js';
import { compareKeys } from '../sorted.js';
import { storedOf } from './config-store.repository.js';

/** How a runtime read merges its layers' stored values (ConfigLayerRepository). */

/** A merged row: a value as stored, and the rank of its layer. */
export interface MergedRow<T> {
  readonly key: string;
  readonly value: T | null;
  readonly sealed: Buffer | null;
  readonly data_key_id: string | null;
  readonly rank: number;
}

/** The winning rows by key, in key order, as stored values (AAD: their layer's address and name). */
export function storedByKey<T>(
  merged: [string, MergedRow<T>][],
  request: LayerAddress,
  aadName: (key: string) => string = (key) => key,
): Map<string, Stored<T>> {
  return new Map(
    merged
      .sort(([a], [b]) => compareKeys(a, b))
      .map(([key, r]) => [key, storedOf(r.value, r.sealed, r.data_key_id, layerOfRank(request, r.rank), aadName(key))]),
  );
}

/**
 * The address of the layer of `rank` for `request` (LAYERS_OF_REQUEST): product, product+env, service,
 * service+env. A sealed value's AAD names it (DESIGN 17).
 */
export function layerOfRank(request: LayerAddress, rank: number): LayerAddress {
  const envTag = rank % 2 === 1 ? request.envTag : null;
  return rank >= 2
    ? { host: request.host, serviceId: request.serviceId, productId: null, productVersion: null, envTag }
    : {
        host: request.host,
        serviceId: null,
        productId: request.productId,
        productVersion: request.productVersion,
        envTag,
      };
}

/** Merges rows already ordered by rank: later (higher) layers win per key. */
export function mergeByRank<T>(rows: readonly { key: string; value: T }[]): [string, T][] {
  const merged = new Map<string, T>();
  for (const row of rows) merged.set(row.key, row.value);
  return [...merged];
}
