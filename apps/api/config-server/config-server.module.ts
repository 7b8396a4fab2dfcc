import { Inject, Injectable, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { SETTINGS, type Settings } from '#platform';
import { ConfigAdminController } from './config-admin.controller.js';
import { ConfigAdminService } from './config-admin.service.js';
import { ConfigHistoryController } from './config-history.controller.js';
import { ConfigHistoryService } from './config-history.service.js';
import { ConfigServerController } from './config-server.controller.js';
import { ConfigServerService } from './config-server.service.js';
import { ConfigKeys, configKeysFor } from './encryption/config-keys.js';

/** Says at every start how config values are kept, when it is not a ring the operator gave. */
@Injectable()
class ConfigKeysWarning implements OnModuleInit {
  constructor(@Inject(ConfigKeys) private readonly keys: ConfigKeys) {}

  onModuleInit(): void {
    if (this.keys.warning !== undefined) new Logger('ConfigKeys').warn(this.keys.warning);
  }
}

/** The config server (DESIGN 7): runtimes read merged layers behind the binding rule; admins write layers. */
@Module({
  controllers: [ConfigServerController, ConfigAdminController, ConfigHistoryController],
  // The start-up warning of DESIGN 6.4 lives with the only api feature the switch affects.
  providers: [
    ConfigServerService,
    ConfigAdminService,
    ConfigHistoryService,
    // DESIGN 17: production without CONFIG_KEYRING_FILE (or ALLOW_PLAINTEXT_CONFIG) stops start-up here.
    { provide: ConfigKeys, useFactory: (settings: Settings) => configKeysFor(settings), inject: [SETTINGS] },
    ConfigKeysWarning,
  ],
})
export class ConfigServerModule {}
