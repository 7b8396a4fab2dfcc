import { Inject, Injectable, Logger, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ControlSession } from './control-session.js';
import { accessOf, type PoolMode } from './access.js';
import { dataSourceOptions, migrate, runMigrations } from './data-source.js';
import { ChangeEventRepository } from './repositories/change-event.repository.js';
import { ConfigHistoryRepository } from './repositories/config-history.repository.js';
import { ConfigKeyRepository } from './repositories/config-key.repository.js';
import { ConfigLayerRepository } from './repositories/config-layer.repository.js';
import { ConfigStoreRepository } from './repositories/config-store.repository.js';
import { ControllerLeaseRepository } from './repositories/controller-lease.repository.js';
import { EntityLinkRepository } from './repositories/entity-link.repository.js';
import { EntityRepository } from './repositories/entity.repository.js';
import { OAuthClientRepository } from './repositories/oauth-client.repository.js';
import { RuntimeInstanceRepository } from './repositories/runtime-instance.repository.js';
import { TagRepository } from './repositories/tag.repository.js';
import { UnitOfWork } from './repository.js';

/** One repository per aggregate; services get them (and `UnitOfWork` for transactions) by injection. */
const REPOSITORIES = [
  TagRepository,
  EntityRepository,
  EntityLinkRepository,
  ConfigLayerRepository,
  ConfigHistoryRepository,
  ConfigStoreRepository,
  ConfigKeyRepository,
  RuntimeInstanceRepository,
  ControllerLeaseRepository,
  OAuthClientRepository,
  ChangeEventRepository,
  UnitOfWork,
];

export interface DatabaseModuleOptions {
  readonly url: string;
  /** DATABASE_SESSION_URL: LISTEN, the lease and migrations; required when `url` is a transaction pooler. */
  readonly sessionUrl?: string;
  /** DATABASE_POOL_MODE (DESIGN 15): declared by the operator, never inferred from the URLs. */
  readonly poolMode: PoolMode;
  /** Apply pending migrations before the app serves (the api does; the controller does not). */
  readonly runMigrations: boolean;
  readonly applicationName: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
}

const RUN_MIGRATIONS = Symbol('RUN_MIGRATIONS');
const OPTIONS = Symbol('DATABASE_OPTIONS');

@Injectable()
class MigrationsOnStart implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(RUN_MIGRATIONS) private readonly enabled: boolean,
    @Inject(OPTIONS) private readonly options: DatabaseModuleOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    const { sessionUrl, poolMode } = this.options;
    if (poolMode === 'transaction') await this.checkPoolerTimeout();
    if (!this.enabled) return;
    // Migrations hold their locks for a whole batch: behind a transaction pooler they run on a direct connection.
    const applied =
      sessionUrl !== undefined && poolMode === 'transaction'
        ? await migrate(sessionUrl)
        : await runMigrations(this.dataSource);
    if (applied.length > 0) this.logger.log(`applied migrations: ${applied.join(', ')}`);
  }

  /** Statements outside a transaction run under the pooler's timeout (its server connections'): say so when none. */
  private async checkPoolerTimeout(): Promise<void> {
    const rows = await this.dataSource.query<{ ms: string }[]>(
      `select setting as ms from pg_settings where name = 'statement_timeout'`,
    );
    const ms = Number(rows[0]?.ms ?? 0);
    if (ms === 0 && this.options.statementTimeoutMs > 0) {
      this.logger.warn(
        { statementTimeoutMs: this.options.statementTimeoutMs },
        'DATABASE_URL is a transaction pooler whose server connections have no statement_timeout: set it there ' +
          '(PgBouncer connect_query, or ALTER ROLE ... SET statement_timeout); DB_STATEMENT_TIMEOUT_MS covers transactions only',
      );
    }
  }
}

/** A transaction pooler keeps no session: LISTEN there would be silently lost, so refuse to start instead. */
export function assertSessionUrl(options: Pick<DatabaseModuleOptions, 'url' | 'sessionUrl' | 'poolMode'>): void {
  if (options.poolMode !== 'transaction') return;
  if (options.sessionUrl === undefined || options.sessionUrl === options.url) {
    throw new Error(
      'DATABASE_POOL_MODE=transaction needs DATABASE_SESSION_URL: a direct connection (not the pooler) for LISTEN, ' +
        'the controller lease and migrations',
    );
  }
}

@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    assertSessionUrl(options);
    const logger = new Logger('Database');
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions({
            url: options.url,
            sessionUrl: options.sessionUrl,
            poolMode: options.poolMode,
            applicationName: options.applicationName,
            poolSize: options.poolSize,
            statementTimeoutMs: options.statementTimeoutMs,
            sink: {
              error: (fields, message) => logger.error({ ...fields }, message),
              warn: (fields, message) => logger.warn({ ...fields }, message),
            },
          }),
          retryAttempts: 5,
          retryDelay: 1000,
        }),
      ],
      providers: [
        { provide: RUN_MIGRATIONS, useValue: options.runMigrations },
        { provide: OPTIONS, useValue: options },
        MigrationsOnStart,
        // Connects on first use only: a process that never listens or leases opens no extra session.
        {
          provide: ControlSession,
          useFactory: (db: DataSource) => accessOf(db).openSession('control'),
          inject: [DataSource],
        },
        ...REPOSITORIES,
      ],
      exports: [TypeOrmModule, ControlSession, ...REPOSITORIES],
    };
  }
}
