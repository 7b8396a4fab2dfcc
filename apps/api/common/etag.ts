import { badRequest } from '#platform';

/** The weak ETag of a resource version (DESIGN 4.1). */
export const etagOf = (version: number): string => `W/"${version}"`;

/** What `If-Match` asks for: any version (`*`), one of some versions, or nothing (unconditional). */
export type VersionCondition = { readonly any: true } | { readonly versions: readonly number[] } | undefined;

/** Parses `If-Match`; weak and strong forms compare alike since the tag is just the version number. */
export function parseIfMatch(header: string | undefined): VersionCondition {
  if (header === undefined || header.trim() === '') return undefined;
  if (header.trim() === '*') return { any: true };
  const versions = header.split(',').map((part) => {
    const match = /^\s*(?:W\/)?"(\d{1,10})"\s*$/.exec(part);
    if (match === null) throw badRequest('If-Match must be "*" or a list of ETags such as W/"3"');
    return Number(match[1]);
  });
  return { versions };
}

export function versionMatches(condition: VersionCondition, version: number): boolean {
  if (condition === undefined || 'any' in condition) return true;
  return condition.versions.includes(version);
}
