/** A client id as `POST /oauth2/clients` and `client:create` accept it (DESIGN 10): no stored client has another. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;

/** Whether `value` could name a client; anything else is answered as an unknown client without a lookup. */
export function isClientId(value: string): boolean {
  return CLIENT_ID_PATTERN.test(value);
}
