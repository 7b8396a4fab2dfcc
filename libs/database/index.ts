export { ControlSession } from './control-session.js';
export { dataSourceOptions, migrate, runMigrations, type DatabaseOptions } from './data-source.js';
export { DatabaseModule, type DatabaseModuleOptions } from './database.module.js';
export { startEmbeddedPostgres, type EmbeddedServer, type EmbeddedOptions } from './embedded.js';
export * from './entities/index.js';
export { foreignKeyViolation, isDatabaseUnavailable, scrubSqlMessage, uniqueViolation } from './pg-errors.js';
export { queryObserver, ObservingTypeOrmLogger } from './query-observer.js';
export {
  afterCommit,
  BaseRepository,
  DuplicateKeyError,
  Tx,
  UnitOfWork,
  whereInScope,
  type HostScope,
} from './repository.js';
export * from './repositories/index.js';
export { resolveDatabase, type ResolvedDatabase } from './resolve-url.js';
export { compareKeys, sortedRecord } from './sorted.js';
