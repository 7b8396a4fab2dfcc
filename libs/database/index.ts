export { dataSourceOptions, migrate, runMigrations, type DatabaseOptions } from './data-source.js';
export { DatabaseModule, type DatabaseModuleOptions } from './database.module.js';
export { startEmbeddedPostgres, type EmbeddedServer, type EmbeddedOptions } from './embedded.js';
export { foreignKeyViolation, uniqueViolation } from './pg-errors.js';
export { queryObserver, ObservingTypeOrmLogger } from './query-observer.js';
export { resolveDatabase, type ResolvedDatabase } from './resolve-url.js';
