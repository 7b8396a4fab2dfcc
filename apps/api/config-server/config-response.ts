import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { stringify } from 'yaml';
import type { JsonValue } from './config-values.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const YAML_TYPE = 'application/yaml; charset=utf-8';

const YAML_MEDIA_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

function quality(params: readonly string[]): number {
  for (const param of params) {
    const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return 1;
}

/** True when `Accept` prefers YAML over JSON; JSON is the default (no header, wildcards, a tie, neither named). */
export function wantsYaml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let yaml = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const media = type.trim().toLowerCase();
    const q = quality(params);
    if (YAML_MEDIA_TYPES.has(media)) yaml = Math.max(yaml, q);
    if (media === 'application/json') json = Math.max(json, q);
  }
  return yaml > 0 && yaml > json;
}

/** A `values.yml`: one flat `configName.propertyName: value` line per key, in the given (sorted) order. */
export function renderYaml(properties: Readonly<Record<string, JsonValue>>): string {
  return stringify(properties, { lineWidth: 0 });
}

/** A strong ETag over the exact body, so each representation (JSON or YAML) has its own. */
export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** `If-None-Match` matches `etag` by weak comparison (RFC 9110 13.1.2), or `*`. */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/** Sends a configuration body with its ETag, or 304 without a body when the client already has it. */
export function sendConfig(
  reply: FastifyReply,
  body: string,
  contentType: string,
  ifNoneMatch: string | undefined,
): void {
  const etag = etagOf(body);
  // The answer depends on the caller's token (and on Accept): shared caches must not serve it to another.
  void reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization, Accept');
  if (noneMatchHits(ifNoneMatch, etag)) {
    void reply.status(304).send();
    return;
  }
  void reply.status(200).type(contentType).send(body);
}
