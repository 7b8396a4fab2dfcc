import type { InstanceStatus, Protocol, RuntimeInstance } from './runtime-instance.entity.js';

/** An instance in `GET /instances` (operators). */
export interface InstanceView {
  readonly runtimeInstanceId: string;
  readonly hostId: string;
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly version: string | null;
  readonly protocol: Protocol | null;
  readonly address: string | null;
  readonly port: number | null;
  readonly tags: Readonly<Record<string, string>>;
  readonly status: InstanceStatus;
  readonly connectedTs: string;
  readonly lastSeenTs: string;
  readonly disconnectedTs: string | null;
  readonly controllerId: string;
}

export interface InstancePage {
  readonly total: number;
  readonly instances: readonly InstanceView[];
}

/** A node in a `discovery/lookup` result: where a connected instance can be reached. */
export type NodeView = Pick<
  InstanceView,
  'runtimeInstanceId' | 'envTag' | 'version' | 'protocol' | 'address' | 'port' | 'tags'
>;

export interface LookupResult {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly nodes: readonly NodeView[];
}

export interface RegisterResult {
  readonly runtimeInstanceId: string;
  readonly status: 'registered';
}

export interface DeregisterResult {
  readonly runtimeInstanceId: string;
  readonly status: 'deregistered';
}

export function toInstanceView(instance: RuntimeInstance): InstanceView {
  return {
    runtimeInstanceId: instance.runtimeInstanceId,
    hostId: instance.hostId,
    serviceId: instance.serviceId,
    envTag: instance.envTag,
    version: instance.version,
    protocol: instance.protocol,
    address: instance.address,
    port: instance.port,
    tags: instance.tags,
    status: instance.status,
    connectedTs: instance.connectedTs.toISOString(),
    lastSeenTs: instance.lastSeenTs.toISOString(),
    disconnectedTs: instance.disconnectedTs?.toISOString() ?? null,
    controllerId: instance.controllerId,
  };
}

export function toNodeView(instance: RuntimeInstance): NodeView {
  return {
    runtimeInstanceId: instance.runtimeInstanceId,
    envTag: instance.envTag,
    version: instance.version,
    protocol: instance.protocol,
    address: instance.address,
    port: instance.port,
    tags: instance.tags,
  };
}
