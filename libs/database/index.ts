export { DatabaseAccess, POOL_MODES, StatementNames, type PoolMode } from './access.js';
export { ControlSession } from './control-session.js';
export { dataSourceOptions, migrate, runMigrations, scriptDatabase, type DatabaseOptions } from './data-source.js';
export { DatabaseModule, assertSessionUrl, type DatabaseModuleOptions } from './database.module.js';
export { startEmbeddedPostgres, type EmbeddedServer, type EmbeddedOptions } from './embedded.js';
export * from './entities/index.js';
export { queryObserver } from './query-observer.js';
export { afterCommit, DuplicateKeyError, Tx, UnitOfWork, type HostVisibility } from './repository.js';
export * from './repositories/index.js';
export { resolveDatabase, type ResolvedDatabase } from './resolve-url.js';
export { propertyChange, sameJson } from './property-change.js';
export { compareKeys, sortedRecord } from './sorted.js';
export type { SortOrder } from './sort-order.js';
export {
  Keyset,
  withTieBreaker,
  type KeyColumn,
  type KeysetPage,
  type KeyType,
  type KeyValue,
  type PageWindow,
} from './keyset.js';
export { parseTimestamptz } from './timestamps.js';
export { migrations, type MigrationStep, type SteppedMigration } from './migrations/index.js';
