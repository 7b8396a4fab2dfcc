import { SettingsError, type Settings } from '#platform';
import { ensureDevKeyRing, loadKeyRing, type KeyRing } from './key-ring.js';

/** The api's key ring for config values (DESIGN 17), or null when the operator allowed plaintext. */
export class ConfigKeys {
  constructor(
    readonly ring: KeyRing | null,
    /** Said at every start: plaintext allowed, or a ring generated under the data directory. */
    readonly warning: string | undefined,
  ) {}
}

export const PLAINTEXT_WARNING =
  'ALLOW_PLAINTEXT_CONFIG=true: config values and files are stored unencrypted; set CONFIG_KEYRING_FILE to encrypt them';

/**
 * CONFIG_KEYRING_FILE's ring; without one, production refuses to start unless ALLOW_PLAINTEXT_CONFIG=true,
 * and elsewhere a ring is generated under BINDERY_DATA_DIR (like the dev signing key).
 */
export async function configKeysFor(
  settings: Pick<Settings, 'configStore' | 'production' | 'dataDir'>,
): Promise<ConfigKeys> {
  const { keyringFile, allowPlaintext } = settings.configStore;
  if (keyringFile !== undefined) return new ConfigKeys(await loadKeyRing(keyringFile), undefined);
  if (allowPlaintext) return new ConfigKeys(null, PLAINTEXT_WARNING);
  if (settings.production) {
    throw new SettingsError(
      'CONFIG_KEYRING_FILE',
      'required with NODE_ENV=production: config values are encrypted at rest (ALLOW_PLAINTEXT_CONFIG=true stores them unencrypted)',
    );
  }
  const file = await ensureDevKeyRing(settings.dataDir);
  return new ConfigKeys(
    await loadKeyRing(file),
    `config values are encrypted with a key ring generated at ${file}: every api replica needs the same ring (CONFIG_KEYRING_FILE)`,
  );
}
