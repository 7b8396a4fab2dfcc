import { resolve } from 'node:path';
import { bool, SettingsError, text, type Env } from './env-values.js';

/** How config values are kept at rest (DESIGN 17). */
export interface ConfigKeySettings {
  /** CONFIG_KEYRING_FILE: `kid: base64` lines, the first active; unset outside production: a generated ring. */
  readonly keyringFile: string | undefined;
  /** ALLOW_PLAINTEXT_CONFIG: no key ring at all, values stored as they come (warned at every start). */
  readonly allowPlaintext: boolean;
}

/** CONFIG_KEYRING_FILE and ALLOW_PLAINTEXT_CONFIG (the api judges them at start: the controller holds no values). */
export function configKeySettings(env: Env): ConfigKeySettings {
  const file = text(env, 'CONFIG_KEYRING_FILE');
  const allowPlaintext = bool(env, 'ALLOW_PLAINTEXT_CONFIG', false);
  if (file !== undefined && allowPlaintext) {
    throw new SettingsError('ALLOW_PLAINTEXT_CONFIG', 'cannot be true together with CONFIG_KEYRING_FILE');
  }
  return { keyringFile: file === undefined ? undefined : resolve(file), allowPlaintext };
}
