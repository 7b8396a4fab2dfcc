import { JsonErrorException } from '#platform';

/** RFC 6749 5.2 error codes the token endpoint answers with. */
export type OAuthErrorCode =
  'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'temporarily_unavailable';

export const BASIC_CHALLENGE = 'Basic realm="bindery"';

/** An RFC 6749 error answer: `{ error, error_description }`, never problem+json (DESIGN 3). */
export function oauthError(
  status: number,
  error: OAuthErrorCode,
  description: string,
  headers: Record<string, string> = {},
): JsonErrorException {
  return new JsonErrorException(status, { error, error_description: description }, headers);
}

export const invalidRequest = (description: string): JsonErrorException =>
  oauthError(400, 'invalid_request', description);

/** 401 with the Basic challenge (RFC 6749 5.2): the client could not be authenticated. */
export const invalidClient = (): JsonErrorException =>
  oauthError(401, 'invalid_client', 'Client authentication failed', { 'www-authenticate': BASIC_CHALLENGE });
