import { Inject, Injectable, Logger, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ControlSession } from './control-session.js';
import { dataSourceOptions, runMigrations } from './data-source.js';
import { ChangeEventRepository } from './repositories/change-event.repository.js';
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
  RuntimeInstanceRepository,
  ControllerLeaseRepository,
  OAuthClientRepository,
  ChangeEventRepository,
  UnitOfWork,
];

export interface DatabaseModuleOptions {
  readonly url: string;
  /** Apply pending migrations before the app serves (the api does; the controller does not). */
  readonly runMigrations: boolean;
  readonly applicationName: string;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
}

const RUN_MIGRATIONS = Symbol('RUN_MIGRATIONS');

@Injectable()
class MigrationsOnStart implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(RUN_MIGRATIONS) private readonly enabled: boolean,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const applied = await runMigrations(this.dataSource);
    if (applied.length > 0) this.logger.log(`applied migrations: ${applied.join(', ')}`);
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
        MigrationsOnStart,
        // Connects on first use only: a process that never listens or leases opens no extra session.
        {
          provide: ControlSession,
          useFactory: () => new ControlSession(options.url, `${options.applicationName}-control`),
        },
        ...REPOSITORIES,
      ],
      exports: [TypeOrmModule, ControlSession, ...REPOSITORIES],
    };
  }
}
