import { Inject, Injectable, Logger, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ControlSession } from './control-session.js';
import { behindPooler, dataSourceOptions, migrate, runMigrations } from './data-source.js';
import { ChangeEventRepository } from './repositories/change-event.repository.js';
import { ConfigHistoryRepository } from './repositories/config-history.repository.js';
import { ConfigLayerRepository } from './repositories/config-layer.repository.js';
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
  RuntimeInstanceRepository,
  ControllerLeaseRepository,
  OAuthClientRepository,
  ChangeEventRepository,
  UnitOfWork,
];

export interface DatabaseModuleOptions {
  readonly url: string;
  /** DATABASE_SESSION_URL: LISTEN, the lease and migrations, when `url` is a transaction pooler (DESIGN 15). */
  readonly sessionUrl?: string;
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
    if (behindPooler(this.options)) await this.checkPoolerTimeout();
    if (!this.enabled) return;
    // Their advisory lock is a session's: behind a transaction pooler they run on a direct connection.
    const { sessionUrl } = this.options;
    const applied =
      sessionUrl !== undefined && behindPooler(this.options)
        ? await migrate(sessionUrl)
        : await runMigrations(this.dataSource);
    if (applied.length > 0) this.logger.log(`applied migrations: ${applied.join(', ')}`);
  }

  /** Behind a pooler the timeout is the pooler's (its server connections'): say so when they have none. */
  private async checkPoolerTimeout(): Promise<void> {
    const rows = await this.dataSource.query<{ ms: string }[]>(
      `select setting as ms from pg_settings where name = 'statement_timeout'`,
    );
    const ms = Number(rows[0]?.ms ?? 0);
    if (ms === 0 && this.options.statementTimeoutMs > 0) {
      this.logger.warn(
        { statementTimeoutMs: this.options.statementTimeoutMs },
        'DATABASE_URL is a pooler whose server connections have no statement_timeout: set it there ' +
          '(PgBouncer connect_query, or ALTER ROLE ... SET statement_timeout); DB_STATEMENT_TIMEOUT_MS is not sent to a pooler',
      );
    }
  }
}

@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    const logger = new Logger('Database');
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions({
            url: options.url,
            sessionUrl: options.sessionUrl,
            applicationName: options.applicationName,
            poolSize: options.poolSize,
            statementTimeoutMs: options.statementTimeoutMs,
            namedStatements: true,
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
          useFactory: () => new ControlSession(options.sessionUrl ?? options.url, `${options.applicationName}-control`),
        },
        ...REPOSITORIES,
      ],
      exports: [TypeOrmModule, ControlSession, ...REPOSITORIES],
    };
  }
}
