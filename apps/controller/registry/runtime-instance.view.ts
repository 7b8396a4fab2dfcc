import type { NodeView } from '#registry';

export interface LookupResult {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly nodes: readonly NodeView[];
  /** Present (true) only when more than LOOKUP_MAX_NODES nodes are connected: the longest-connected are listed. */
  readonly truncated?: true;
}

export interface RegisterResult {
  readonly runtimeInstanceId: string;
  readonly status: 'registered';
}

export interface DeregisterResult {
  readonly runtimeInstanceId: string;
  readonly status: 'deregistered';
}

/** The answer of `service/update_metadata` when it is sent as a request: the registrations it changed. */
export interface UpdateMetadataResult {
  readonly runtimeInstanceIds: readonly string[];
  readonly status: 'updated';
}

/** The answer of `session/refresh` (DESIGN 8). */
export interface RefreshResult {
  readonly status: 'refreshed';
  readonly exp: number;
}

/** The answer of `discovery/subscribe`: a lookup's answer and the id its `discovery/changed` notifications carry. */
export interface SubscribeResult extends LookupResult {
  readonly subscriptionId: string;
}

export interface UnsubscribeResult {
  readonly subscriptionId: string;
  readonly status: 'unsubscribed';
}

/** `discovery/changed` params: the new node set of one subscription (DESIGN 8). */
export type ChangedParams = SubscribeResult;
