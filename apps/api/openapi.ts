/** What the api's `/docs` page is titled. */
export const API_OPENAPI = {
  title: 'Bindery api',
  description: 'Tags, entity tagging (schemas, products, documents) and the token-bound config server.',
};

/** Routes that take form bodies: the token endpoint (RFC 6749); every other route is JSON only. */
export const API_FORM_ROUTES = ['/oauth2/token'];
