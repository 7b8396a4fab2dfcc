/** What the api's `/docs` page is titled. */
export const API_OPENAPI = {
  title: 'Bindery api',
  description: 'Tags, entity tagging (schemas, products, documents) and the token-bound config server.',
};
