export {
  ConfigLayerRepository,
  MERGED_PROPERTIES,
  type LayerSummary,
  type WriteMode,
} from './config-layer.repository.js';
export {
  CONFIG_CHANNEL,
  ConfigHistoryRepository,
  type AppendedVersion,
  type LayerVersionContent,
  type LayerVersionRecord,
  type SealedVersion,
  type StoredVersion,
  type StoredVersionContent,
} from './config-history.repository.js';
export { ConfigKeyRepository, type PlaintextRows, type StoredDataKey } from './config-key.repository.js';
export {
  ConfigStoreRepository,
  storedOf,
  type NewContent,
  type StoredContent,
  type StoredFile,
} from './config-store.repository.js';
export {
  REGISTER_INSTANCE,
  RuntimeInstanceRepository,
  type ClosedConnection,
  type InstanceFilter,
  type InstanceMetadata,
  type InstanceRegistration,
} from './runtime-instance.repository.js';
export { ControllerLeaseRepository, REGISTRY_CHANNEL, type Reaped } from './controller-lease.repository.js';
export { EntityLinkRepository } from './entity-link.repository.js';
export { EntityRepository, type EntityListOptions, type TagCondition } from './entity.repository.js';
export { TAG_SORT_KEYS, TagRepository, type TagFilter, type TagSortKey } from './tag.repository.js';
export {
  OAuthClientRepository,
  type ClientCredentials,
  type ClientOwner,
  type NewOAuthClient,
} from './oauth-client.repository.js';
export {
  ChangeEventRepository,
  EVENTS_CHANNEL,
  type NewChangeEvent,
  type StoredChangeEvent,
  type WriteStatement,
} from './change-event.repository.js';
