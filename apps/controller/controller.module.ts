import { Module, type DynamicModule } from '@nestjs/common';
import { DatabaseModule } from '#database';
import { PlatformModule, type PlatformOptions } from '#platform';
import { TokenBindingModule } from '#token-binding';
import { RegistryModule } from './registry/registry.module.js';

export interface ControllerOptions extends PlatformOptions {
  readonly databaseUrl: string;
}

/** The controller process: runtime registration over WebSocket, instance listing, health. */
@Module({})
export class ControllerModule {
  static forRoot(options: ControllerOptions): DynamicModule {
    return {
      module: ControllerModule,
      imports: [
        PlatformModule.forRoot(options),
        // The api owns the schema: the controller never applies migrations.
        DatabaseModule.forRoot({
          url: options.databaseUrl,
          sessionUrl: options.settings.databaseSessionUrl ?? options.databaseUrl,
          poolMode: options.settings.databasePoolMode,
          runMigrations: false,
          poolSize: options.settings.dbPoolSize,
          statementTimeoutMs: options.settings.dbStatementTimeoutMs,
          applicationName: 'bindery-controller',
        }),
        TokenBindingModule,
        RegistryModule,
      ],
    };
  }
}
