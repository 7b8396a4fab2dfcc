export { checkRuntimeClaims, decodeToken, RuntimeTokenError, type RuntimeIdentity } from './claims.js';
export {
  causeOf,
  describeConfigChange,
  describeRuntimeEvent,
  type DescribedConfigChange,
  type RuntimeClientActivity,
} from './events.js';
export { TokenSource, type TokenSourceOptions } from './token-source.js';
export {
  backoffDelay,
  configDiff,
  isPlainFileName,
  RuntimeClient,
  RuntimeRequestError,
  type ConfigChange,
  type ConfigChangeListener,
  type ConfigLayerAddress,
  type DiscoveryFilter,
  type DiscoverySubscription,
  type LookupResult,
  type MetadataUpdate,
  type RuntimeClientEvent,
  type RuntimeClientOptions,
  type RuntimeInstance,
} from './runtime-client.js';
