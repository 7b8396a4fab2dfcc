import { Module, type DynamicModule } from '@nestjs/common';
import { DatabaseModule } from '#database';
import { PlatformModule, type PlatformOptions } from '#platform';
import { TokenBindingModule } from '#token-binding';
import { ConfigServerModule } from './config-server/config-server.module.js';
import { ConsoleModule } from './console/console.module.js';
import { EntityTagModule } from './catalog/entity-tag.module.js';
import { EventsModule } from './events/events.module.js';
import { RegistryModule } from './registry/registry.module.js';
import { TagsModule } from './tags/tags.module.js';
import { TokenIssuerModule } from './token-issuer/token-issuer.module.js';

export interface ApiOptions extends PlatformOptions {
  readonly databaseUrl: string;
}

/** The api process: tags, entity tagging and the config server over one database. */
@Module({})
export class ApiModule {
  static forRoot(options: ApiOptions): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        PlatformModule.forRoot(options),
        DatabaseModule.forRoot({
          url: options.databaseUrl,
          sessionUrl: options.settings.databaseSessionUrl ?? options.databaseUrl,
          poolMode: options.settings.databasePoolMode,
          runMigrations: options.settings.runMigrations,
          poolSize: options.settings.dbPoolSize,
          statementTimeoutMs: options.settings.dbStatementTimeoutMs,
          applicationName: 'bindery-api',
        }),
        TokenBindingModule,
        TagsModule,
        EntityTagModule,
        EventsModule,
        RegistryModule,
        ConsoleModule,
        ConfigServerModule,
        // Dev mode and TOKEN_ISSUER_KEY_FILE turn the built-in issuer on (DESIGN 10).
        ...(options.settings.devMode || options.settings.tokenIssuer.keyFile !== undefined ? [TokenIssuerModule] : []),
      ],
    };
  }
}
