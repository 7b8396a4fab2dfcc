/** What the apps, scripts and tests use of the token-binding lib; everything else stays inside it. */
export {
  can,
  isGlobalAdmin,
  operatorPrincipal,
  principalOf,
  SCOPE_ADMIN,
  SCOPE_READ,
  SCOPE_WRITE,
  type Principal,
} from './claims.js';
export { capabilitiesOf, isCapability, KNOWN_SCOPES, OPERATOR_SCOPES } from './capabilities.js';
export { capabilitySentence, decideAccess, type AccessDecision, type AccessRequest } from './access-rule.js';
export { ensureDevKey, signDevToken } from './dev-keys.js';
export { BEARER_REALM, bearerCredential } from './bearer.js';
export { KeySourceUnavailableError } from './keys.js';
export { TokenVerifier } from './token-verifier.js';
export { decideBinding, registeredEnv, type BindingKind } from './binding.js';
export { BindingRejectedError, TokenBindingGuard, type BindingOptions } from './token-binding.guard.js';
export { Access, BoundAccess, Bound, CurrentPrincipal, type AccessOptions } from './decorators.js';
export type { RpcCall } from './principal-context.js';
export { TokenBindingModule } from './token-binding.module.js';
export { issuerKeyOf, IssuerKeyRing, issuerKeyRingFor } from './issuer-keys.js';
