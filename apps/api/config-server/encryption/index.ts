/** Encryption at rest of config values and files (DESIGN 17): the key ring and the envelope. */
export { DecryptError, KeyRingError } from './errors.js';
export {
  DEV_KEY_RING_FILE,
  KEY_BYTES,
  KID_PATTERN,
  KeyRing,
  ensureDevKeyRing,
  loadKeyRing,
  parseKeyRing,
  type ActiveKey,
} from './key-ring.js';
export {
  DATA_KEY_BYTES,
  SEALED_OVERHEAD,
  SEALED_VERSION,
  newDataKey,
  openJson,
  openValue,
  sealJson,
  sealValue,
  unwrapDataKey,
  valueAad,
  wrapDataKey,
  type WrappedKey,
} from './envelope.js';
export { ConfigKeys, configKeysFor, PLAINTEXT_WARNING } from './config-keys.js';
