import type { HttpAppOptions } from '#platform';
import { BATCH_BODY_LIMIT_BYTES } from './catalog/dto/tag-batch.dto.js';

/** What the api's `/docs` page is titled. */
export const API_OPENAPI = {
  title: 'Bindery api',
  description: 'Tags, entity tagging (schemas, products, documents) and the token-bound config server.',
};

/** Routes that take form bodies: the token endpoint (RFC 6749); every other route is JSON only. */
export const API_FORM_ROUTES = ['/oauth2/token'];

/** The api's HTTP edge, shared by main.ts and the tests: every route is JSON only but these, 1 MiB but these. */
export function apiHttpOptions(trustProxy: boolean): HttpAppOptions {
  return {
    openApi: API_OPENAPI,
    formRoutes: API_FORM_ROUTES,
    bodyLimits: { '/tags/batch': BATCH_BODY_LIMIT_BYTES },
    trustProxy,
  };
}
