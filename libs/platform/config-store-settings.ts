import { resolve } from 'node:path';
import { bool, positiveInt, SettingsError, text, type Env } from './env-values.js';

/** How config layers are kept (DESIGN 14, 17): their history, and the key ring values are encrypted with. */
export interface ConfigStoreSettings {
  /** CONFIG_KEYRING_FILE: `kid: base64` lines, the first active; unset outside production: a generated ring. */
  readonly keyringFile: string | undefined;
  /** ALLOW_PLAINTEXT_CONFIG: no key ring at all, values stored as they come (warned at every start). */
  readonly allowPlaintext: boolean;
  /** CONFIG_HISTORY_DAYS: versions older than this are pruned, each layer keeping its last 20. */
  readonly historyDays: number;
  /** CONFIG_HISTORY_MAX_VERSIONS: versions per layer beyond this are pruned whatever their age. */
  readonly historyMaxVersions: number;
}

/** The versions every layer keeps whatever their age (DESIGN 14); the maximum may not go below it. */
export const KEPT_VERSIONS = 20;

/** The config store's settings (the api judges the key ring at start: the controller holds no values). */
export function configStoreSettings(env: Env): ConfigStoreSettings {
  const file = text(env, 'CONFIG_KEYRING_FILE');
  const allowPlaintext = bool(env, 'ALLOW_PLAINTEXT_CONFIG', false);
  if (file !== undefined && allowPlaintext) {
    throw new SettingsError('ALLOW_PLAINTEXT_CONFIG', 'cannot be true together with CONFIG_KEYRING_FILE');
  }
  const historyMaxVersions = positiveInt(env, 'CONFIG_HISTORY_MAX_VERSIONS', 1000);
  if (historyMaxVersions < KEPT_VERSIONS) {
    throw new SettingsError(
      'CONFIG_HISTORY_MAX_VERSIONS',
      `must be at least ${KEPT_VERSIONS} (got ${historyMaxVersions})`,
    );
  }
  return {
    keyringFile: file === undefined ? undefined : resolve(file),
    allowPlaintext,
    historyDays: positiveInt(env, 'CONFIG_HISTORY_DAYS', 365),
    historyMaxVersions,
  };
}
