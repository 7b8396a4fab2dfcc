import { problemResponse } from '#platform';

/** OpenAPI pieces shared by the versioned resources (tags and entities). */

/** The `If-Match` request header of PUT and DELETE. */
export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description: '`*` or ETags such as W/"3"; a mismatch is 412, a malformed value 400',
};

/** The `ETag` response header: the resource's version. */
export const ETAG_HEADER = { ETag: { description: 'W/"<aggregateVersion>"', schema: { type: 'string' } } };

/** The `Location` response header of a create, with the new resource's path as `template`. */
export const locationHeader = (template: string) => ({
  Location: { description: template, schema: { type: 'string' } },
});

export const PRECONDITION_FAILED = problemResponse(412, 'If-Match does not match the current version');
