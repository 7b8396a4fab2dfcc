import { DecryptError } from '../../apps/api/config-server/encryption/index.js';

/** The DecryptError `fn` throws; fails the test when it throws something else or nothing. */
export function decryptError(fn: () => unknown): DecryptError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DecryptError) return error;
    throw error;
  }
  throw new Error('expected a DecryptError, and it opened');
}
