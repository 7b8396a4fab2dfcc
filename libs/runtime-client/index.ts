export { checkRuntimeClaims, decodeToken, RuntimeTokenError, type RuntimeIdentity } from './claims.js';
export { causeOf, describeRuntimeEvent, type RuntimeClientActivity } from './events.js';
export { TokenSource, type TokenSourceOptions } from './token-source.js';
export {
  backoffDelay,
  isPlainFileName,
  RuntimeClient,
  RuntimeRequestError,
  type DiscoveryFilter,
  type DiscoverySubscription,
  type LookupResult,
  type RuntimeClientEvent,
  type RuntimeClientOptions,
  type RuntimeInstance,
} from './runtime-client.js';
