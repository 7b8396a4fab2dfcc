import { Header } from '@nestjs/common';
import { problemResponse } from '#platform';
import { MAX_REASON_LENGTH } from './layer-access.js';

/** OpenAPI pieces of the config admin endpoints (DESIGN 7, 14). */

/** The `X-Change-Reason` request header of every admin write. */
export const CHANGE_REASON_HEADER = {
  name: 'X-Change-Reason',
  required: false,
  description: `stored as the version's reason (at most ${MAX_REASON_LENGTH} characters, no control characters; else 400)`,
};

export const OTHER_HOST = problemResponse(403, "The token's host claim names another host than the layer's");

/**
 * On every admin answer that carries decrypted values (a layer's properties or files, a version's content):
 * no browser or proxy keeps a copy of a secret (as the issuer's client secrets, DESIGN 10).
 */
export const NotStored = (): MethodDecorator => Header('cache-control', 'no-store');
