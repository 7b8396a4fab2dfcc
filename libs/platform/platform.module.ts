import { Global, Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AccessDeclarationCheck } from './access.js';
import type { DestinationStream } from 'pino';
import { HealthController } from './health.controller.js';
import { AppLogger } from './app-logger.js';
import { createRootLogger } from './logging.js';
import { Metrics, MetricsController } from './metrics.js';
import { ReadinessDetails } from './readiness.js';
import type { Settings } from './settings.js';

export const SETTINGS = Symbol('SETTINGS');

export interface PlatformOptions {
  readonly settings: Settings;
  /** Where logs go instead of stdout (tests read them). */
  readonly logStream?: DestinationStream;
}

/** Settings, logging, health and metrics for every process. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions): DynamicModule {
    return {
      module: PlatformModule,
      // DESIGN 16: an app with an undeclared route or JSON-RPC method refuses to start.
      imports: [DiscoveryModule],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: SETTINGS, useValue: options.settings },
        AccessDeclarationCheck,
        Metrics,
        ReadinessDetails,
        {
          provide: AppLogger,
          useFactory: () =>
            new AppLogger(createRootLogger(options.settings.logLevel, options.settings.trustProxy, options.logStream)),
        },
      ],
      exports: [SETTINGS, Metrics, AppLogger, ReadinessDetails],
    };
  }
}
