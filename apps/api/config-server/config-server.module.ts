import { Inject, Injectable, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { ConfigKeyRepository } from '#database';
import { ReadinessDetails, SETTINGS, type Settings } from '#platform';
import { ConfigAdminController } from './config-admin.controller.js';
import { ConfigAdminService } from './config-admin.service.js';
import { ConfigHistoryController } from './config-history.controller.js';
import { ConfigHistoryService } from './config-history.service.js';
import { ConfigServerController } from './config-server.controller.js';
import { ConfigServerService } from './config-server.service.js';
import { ConfigKeys, configKeysFor } from './encryption/config-keys.js';
import { ConfigVault } from './encryption/config-vault.js';
import { KeyRotation } from './encryption/key-rotation.js';
import { KeysController } from './keys.controller.js';
import { LayerReader } from './layer-reader.js';
import { HISTORY_MAX_VERSIONS, LayerWriter } from './layer-writer.js';

/** Says at every start how config values are kept, when it is not a ring the operator gave. */
@Injectable()
class ConfigKeysWarning implements OnModuleInit {
  constructor(@Inject(ConfigKeys) private readonly keys: ConfigKeys) {}

  onModuleInit(): void {
    if (this.keys.warning !== undefined) new Logger('ConfigKeys').warn(this.keys.warning);
  }
}

/** Start-up refuses when stored data keys name a kid the ring lacks (DESIGN 17): no value would open. */
@Injectable()
class KeyRingCheck implements OnModuleInit {
  constructor(private readonly rotation: KeyRotation) {}

  onModuleInit(): Promise<void> {
    return this.rotation.assertRingComplete();
  }
}

/** Plaintext rows are counted at most this often for readiness: probes come every few seconds. */
const PLAINTEXT_COUNT_MS = 30_000;

/** Readiness says whether new values are sealed and how many rows still hold plaintext (DESIGN 17). */
@Injectable()
class ConfigReadiness implements OnModuleInit {
  private last: { at: number; value: Promise<{ encryptedWrites: boolean; plaintextRows: number }> } | undefined;

  constructor(
    private readonly details: ReadinessDetails,
    private readonly dataKeys: ConfigKeyRepository,
  ) {}

  onModuleInit(): void {
    this.details.add('config', () => {
      const now = Date.now();
      if (this.last === undefined || now - this.last.at > PLAINTEXT_COUNT_MS) {
        const value = Promise.all([this.dataKeys.encryptedWrites(), this.dataKeys.plaintextRows()]).then(
          ([encryptedWrites, rows]) => ({
            encryptedWrites,
            plaintextRows: rows.properties + rows.files + rows.versions,
          }),
        );
        // A failed count is not kept: the next probe counts again.
        value.catch(() => (this.last = undefined));
        this.last = { at: now, value };
      }
      return this.last.value;
    });
  }
}

/** The config server (DESIGN 7): runtimes read merged layers behind the binding rule; admins write layers. */
@Module({
  controllers: [ConfigServerController, ConfigAdminController, ConfigHistoryController, KeysController],
  // The start-up warning of DESIGN 6.4 lives with the only api feature the switch affects.
  providers: [
    ConfigServerService,
    ConfigAdminService,
    ConfigHistoryService,
    // DESIGN 17: production without CONFIG_KEYRING_FILE (or ALLOW_PLAINTEXT_CONFIG) stops start-up here.
    { provide: ConfigKeys, useFactory: (settings: Settings) => configKeysFor(settings), inject: [SETTINGS] },
    ConfigKeysWarning,
    ConfigVault,
    LayerReader,
    LayerWriter,
    {
      provide: HISTORY_MAX_VERSIONS,
      useFactory: (settings: Settings) => settings.configStore.historyMaxVersions,
      inject: [SETTINGS],
    },
    KeyRotation,
    KeyRingCheck,
    ConfigReadiness,
  ],
})
export class ConfigServerModule {}
