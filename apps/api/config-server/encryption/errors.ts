/** A key ring file that cannot be used; the message names the file or line, never key material (DESIGN 17). */
export class KeyRingError extends Error {
  override readonly name = 'KeyRingError';
}

/**
 * A data key or a value that cannot be decrypted: wrong or missing key, another address or name, or tampered
 * bytes. The message names the `kid` where there is one, never the plaintext nor the ciphertext (DESIGN 17).
 */
export class DecryptError extends Error {
  override readonly name = 'DecryptError';

  constructor(
    message: string,
    /** The key encryption key involved, when the failure is about a wrapped data key. */
    readonly kid?: string,
  ) {
    super(message);
  }
}
