export {
  hasScope,
  isAdmin,
  principalOf,
  scopesOf,
  SCOPE_ADMIN,
  SCOPE_READ,
  SCOPE_WRITE,
  type Principal,
} from './claims.js';
export { DEV_KEY_ALG, ensureDevKey, signDevToken, type DevKey, type DevTokenOptions } from './dev-keys.js';
export {
  Authenticated,
  BearerAuthGuard,
  CurrentPrincipal,
  JwtStrategy,
  principalOfContext,
  type RpcCall,
} from './http-auth.js';
export { hasDuplicateNames, MAX_TOKEN_LENGTH, screenToken, type ScreenedToken } from './token-rules.js';
export {
  KeySourceUnavailableError,
  RemoteJwksKeyStore,
  StaticKeyStore,
  UnknownKeyError,
  type KeyStore,
} from './keys.js';
export { TokenBindingModule } from './token-binding.module.js';
export {
  bearerCredential,
  bearerToken,
  InvalidTokenError,
  type BearerCredential,
  keyStoreFor,
  TokenVerifier,
  tokenVerifierFor,
  type VerificationPolicy,
} from './token-verifier.js';
export {
  BINDING_MESSAGES,
  BindingEnforcer,
  bindingLogFields,
  type BindingKind,
  decideBinding,
  registeredEnv,
  type BindingDecision,
  type BindingLogFields,
  type BindingReason,
  type BindingRequest,
  type BindingWarnLogger,
} from './binding.js';
export {
  AuthenticatedConfigRequest,
  BINDING_LOG_CONTEXT,
  BindingRejectedError,
  type BindingOptions,
  BindingRule,
  bindingLogger,
  Bound,
  TokenBindingGuard,
  UNENFORCED_BINDING_WARNING,
  UnenforcedBindingWarning,
  warnIfBindingUnenforced,
} from './binding.guard.js';
export {
  issuerKeyOf,
  IssuerKeyRing,
  issuerKeyRingFor,
  jwkThumbprint,
  loadIssuerKeys,
  type IssuedTokenOptions,
  type IssuerAlgorithm,
  type IssuerKey,
} from './issuer-keys.js';
