import { badRequest } from '#platform';

/** The weak ETag of a resource version (DESIGN 4.1). */
export const etagOf = (version: number): string => `W/"${version}"`;

/** What `If-Match` asks for: any version (`*`), one of some versions, or nothing (unconditional). */
export type VersionCondition = { readonly any: true } | { readonly versions: readonly number[] } | undefined;

/** RFC 9110's entity-tag: optional `W/`, then a quoted run of etagc (obs-text included, a comma too). */
const ENTITY_TAG = /(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/g;
/** `#entity-tag`: members parted by commas with optional space, empty members allowed (RFC 9110 5.6.1). */
const ENTITY_TAG_LIST = new RegExp(`^[ \\t,]*${ENTITY_TAG.source}(?:[ \\t]*,[ \\t,]*${ENTITY_TAG.source})*[ \\t,]*$`);

/**
 * Parses `If-Match` (RFC 9110 13.1.1): `*`, a list of entity-tags, or nothing (absent, blank or only commas).
 * Weak and strong forms compare alike since the tag is just the version number; 400 only for a malformed header.
 */
export function parseIfMatch(header: string | undefined): VersionCondition {
  if (header === undefined || /^[ \t,]*$/.test(header)) return undefined;
  if (header.trim() === '*') return { any: true };
  if (!ENTITY_TAG_LIST.test(header)) throw badRequest('If-Match must be "*" or a list of ETags such as W/"3"');
  const tags = Array.from(header.matchAll(ENTITY_TAG), (match) => match[1]);
  // A tag that is not a version as etagOf spells it (W/"007", "abc") is well-formed and matches none: 412.
  return { versions: tags.filter((tag) => /^(?:0|[1-9]\d{0,9})$/.test(tag)).map(Number) };
}

export function versionMatches(condition: VersionCondition, version: number): boolean {
  if (condition === undefined || 'any' in condition) return true;
  return condition.versions.includes(version);
}
