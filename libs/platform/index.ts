export { HealthController } from './health.controller.js';
export { ControlCharsGuard } from './request-input.js';
export { BODY_LIMIT_BYTES, createHttpApp, lingeringEnd, type HttpAppOptions } from './http-app.js';
export { AppLogger, logRequests } from './app-logger.js';
export { createRootLogger, REDACTED_PATHS } from './logging.js';
export { clientAddress, requestId } from './request-identity.js';
export { safeError } from './safe-error.js';
export { outsideRequest } from './request-scope.js';
export { endAt, MAX_TIMER_MS, type Deadline } from './timers.js';
export { PlatformModule, SETTINGS, type PlatformOptions } from './platform.module.js';
export {
  badRequest,
  conflict,
  DATABASE_RETRY_AFTER_SEC,
  databaseUnavailable,
  forbidden,
  JsonErrorException,
  notFound,
  OAUTH_ERRORS,
  PlainTextException,
  preconditionFailed,
  PROBLEM_CONTENT_TYPE,
  ProblemException,
  ProblemFilter,
  reasonOf,
  renderError,
  sendError,
  titleFor,
  type FieldError,
  type Problem,
} from './problem.js';
export { ASYMMETRIC_ALGORITHMS, type JwtAlgorithm } from './jwt-settings.js';
export {
  DEV_HOST_ID,
  ISSUER_DISCOVERY_WARNING,
  issuerUndiscoverable,
  loadSettings,
  SettingsError,
  type LogLevel,
  type Settings,
} from './settings.js';
export {
  flattenValidationErrors,
  holdsPrototypeKey,
  OpaqueJson,
  opaqueJsonFields,
  Scalar,
  toInt,
  validationPipe,
} from './validation.js';
export { runMain, type Started } from './main.js';
export { Metrics, MetricsController } from './metrics.js';
export { BEARER_SCHEME, DOCS_CSP, problemResponse, setupOpenApi } from './openapi.js';
export { ID_PATTERN, newId } from './ids.js';
export { isoTime } from './iso-time.js';
export { likePattern, MAX_PAGE_SIZE, PageFields, PageQueryDto, parseSort, type SortKey } from './paging.js';
export { pageBody, pageWindow, type CursorScope, type CursorValue, type PageQuery, type PageWindow } from './cursor.js';
export {
  CONTROL_CHARS,
  hasControlChars,
  HostIdField,
  IdField,
  LineField,
  NameField,
  NoControlChars,
  PlainText,
  TextField,
  trim,
  trimLikeTheBinding,
  TrimmedLikeTheBinding,
  trimToUndefined,
} from './validators.js';
export { isFormBody, MAX_JSON_DEPTH, type FormFields } from './json-body.js';
export {
  ACCESS,
  AccessDeclarationCheck,
  accessOf,
  CAPABILITIES,
  declarationFault,
  DeclareAccess,
  handlersOf,
  Public,
  type AccessDeclaration,
  type Capability,
  type DeclaredHandler,
  type HostLocation,
  type HostRule,
} from './access.js';
export { isDatabaseUnavailable, scrubSqlMessage } from './database-errors.js';
export { KEPT_VERSIONS, type ConfigStoreSettings } from './config-store-settings.js';
export { ReadinessDetails } from './readiness.js';
