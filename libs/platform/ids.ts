import { v7 } from 'uuid';

/** Resource ids: 1..22 characters of the base64url alphabet (DESIGN 4.1, 5.1). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,22}$/;

/** A new id: base64url (no padding) of a UUIDv7, 22 characters, roughly time-ordered. */
export function newId(): string {
  return Buffer.from(v7(undefined, new Uint8Array(16))).toString('base64url');
}
