import type { FastifyInstance } from 'fastify';
import { badRequest } from './problem.js';

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

/**
 * The only body parser of both processes: `application/json` (and `+json` types), nesting at most
 * MAX_JSON_DEPTH levels. Every other content type is refused with 415 by Fastify: a form-encoded body (curl's
 * default) would otherwise be parsed into a confusing list of field errors.
 */
export function useJsonBodiesOnly(instance: FastifyInstance, bodyLimit: number): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/i,
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => {
      const text = body as string;
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
