import type { FastifyInstance } from 'fastify';
import { badRequest, ProblemException } from './problem.js';

/** Deeper JSON is refused before it is parsed, transformed or validated (DESIGN 3). */
export const MAX_JSON_DEPTH = 32;

/** True when `text` nests arrays or objects deeper than `limit`; strings are skipped, escapes honoured. */
export function jsonDepthExceeds(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** One `name=value` parameter of a media type (RFC 9110 5.6.6): a token or a quoted string. */
const MEDIA_PARAMETER = /;\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g;

/** The `charset` parameter of a Content-Type header, unquoted; undefined when it has none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const [, name, raw] of contentType.matchAll(MEDIA_PARAMETER)) {
    if (name?.toLowerCase() !== 'charset' || raw === undefined) continue;
    const quoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"');
    return quoted ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return undefined;
}

/**
 * Bodies are read as UTF-8 (DESIGN 3): a declared charset other than UTF-8 is 415, whatever its case or
 * quoting; other parameters are ignored, as most client libraries send `; charset=utf-8`.
 */
export function foreignCharset(contentType: string | undefined): ProblemException | undefined {
  const charset = charsetOf(contentType);
  if (charset === undefined || charset.toLowerCase() === 'utf-8') return undefined;
  // The charset is not quoted back: no error answer echoes a request header (DESIGN 3).
  return new ProblemException(415, 'Unsupported charset; send UTF-8');
}

/**
 * The only body parser of both processes: `application/json` (not `+json` types: DESIGN 3), with any parameters
 * but a charset other than UTF-8, nesting at most MAX_JSON_DEPTH levels. Every other content type is refused
 * with 415 by Fastify: a form-encoded body (curl's default) would otherwise be parsed into a confusing list
 * of field errors.
 */
export function useJsonBodiesOnly(
  instance: FastifyInstance,
  bodyLimit: number,
  formRoutes: readonly string[] = [],
  routeLimit: (route: string | undefined) => number = () => bodyLimit,
): void {
  instance.removeAllContentTypeParsers();
  useFormBodiesOn(instance, formRoutes);
  instance.addContentTypeParser(
    // Fastify matches the normalised header (`type/subtype; name="value"`), parameters included. Only
    // application/json (DESIGN 3): a `+json` type such as merge-patch means other semantics, so it is 415.
    /^application\/json(?:;|$)/i,
    { parseAs: 'string', bodyLimit },
    (request, body, done) => {
      const refused = foreignCharset(request.headers['content-type']);
      if (refused !== undefined) return done(refused, undefined);
      const text = body as string;
      // `bodyLimit` is the largest any route allows; a chunked body (no Content-Length) meets its own here.
      if (Buffer.byteLength(text) > routeLimit(request.routeOptions.url)) {
        return done(new ProblemException(413, 'Request body is too large'), undefined);
      }
      if (text.trim() === '') return done(null, undefined);
      if (jsonDepthExceeds(text))
        return done(badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch {
        done(badRequest('The body is not valid JSON'), undefined);
      }
    },
  );
}

/** A form-encoded body: each field with every value it was sent with, in order. */
export type FormFields = Readonly<Record<string, readonly string[]>>;

/** The bodies the form parser made: a JSON body of the same shape is not a form. */
const parsedForms = new WeakSet<object>();

/** Whether `body` is what the form parser made of an `application/x-www-form-urlencoded` request. */
export function isFormBody(body: unknown): body is FormFields {
  return typeof body === 'object' && body !== null && parsedForms.has(body);
}

/** Form bodies are small (a token request): anything larger is refused before parsing. */
const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * `application/x-www-form-urlencoded` on the listed routes only (the token endpoint, RFC 6749 wants forms);
 * on every other route it is 415 as before, so a JSON route never sees a form.
 */
function useFormBodiesOn(instance: FastifyInstance, routes: readonly string[]): void {
  if (routes.length === 0) return;
  const allowed = new Set(routes);
  instance.addContentTypeParser(
    /^application\/x-www-form-urlencoded(?:;|$)/i,
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
    (request, body, done) => {
      if (!allowed.has(request.routeOptions.url ?? '')) {
        return done(new ProblemException(415, 'Unsupported Media Type: application/x-www-form-urlencoded'), undefined);
      }
      const refused = foreignCharset(request.headers['content-type']);
      if (refused !== undefined) return done(refused, undefined);
      // A Map, not an object: a field named `__proto__` or `constructor` must find nothing (it was a 500).
      const fields = new Map<string, string[]>();
      for (const [name, value] of new URLSearchParams(body as string)) {
        // Appended in place: copying the list per value made a 16 KiB form of one repeated name cost 46 ms.
        const values = fields.get(name);
        if (values === undefined) fields.set(name, [value]);
        else values.push(value);
      }
      const form = Object.fromEntries(fields);
      parsedForms.add(form);
      done(null, form);
    },
  );
}
