import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import type { FastifyRequest } from 'fastify';
import fc from 'fast-check';
import type { Level } from 'pino';
import { createRootLogger, directLines } from '#platform';
import { assertProperty } from '../support/binding-space.js';

/** A root logger as the processes build it, writing into `lines`. */
function capture(lines: string[], trustProxy: boolean): ReturnType<typeof createRootLogger> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return createRootLogger('trace', trustProxy, sink);
}

const withoutTime = (line: string | undefined): string => String(line).replace(/"time":\d+/, '"time":0');

// Any code point, lone surrogates included, plus the characters pino's own escaping treats specially.
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '%', 's', 'd', 'j', '\n', '\u2028', '\ud800', 'é'), maxLength: 30 }),
  fc.string({ maxLength: 150 }),
);
const request = fc.record({
  id: fc.oneof(fc.uuid(), text),
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'),
  url: fc.oneof(
    fc.webPath(),
    text,
    fc.tuple(fc.webPath(), text).map(([p, q]) => `${p}?${q}`),
  ),
  remoteAddress: fc.option(fc.oneof(fc.ipV4(), fc.ipV6()), { nil: undefined }),
  forwarded: fc.option(text, { nil: undefined }),
});
const scalar = fc.oneof(
  text,
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
);
const value = fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 4 }), fc.array(scalar));
// Field names as code uses them, a few that pino redacts or serializes, and odd ones.
const key = fc.oneof(
  fc.constantFrom('context', 'reason', 'endpoint', 'sub', 'res', 'responseTime', 'token', 'jwt', 'err', 'params'),
  fc.string({ maxLength: 12 }),
);
const level = fc.constantFrom<Level>('trace', 'debug', 'info', 'warn', 'error', 'fatal');

describe('lines written directly (directLines)', () => {
  it('are byte for byte what pino writes for the same fields and message, or left to pino', async () => {
    let direct = 0;
    await assertProperty(
      'direct log line',
      fc.property(
        request,
        fc.dictionary(key, value, { maxKeys: 6 }),
        fc.option(text, { nil: undefined }),
        fc.boolean(),
        level,
        fc.boolean(),
        (r, extra, message, withRequest, lvl, trustProxy) => {
          const fast: string[] = [];
          const slow: string[] = [];
          const raw = {
            socket: { remoteAddress: r.remoteAddress },
            headers: r.forwarded === undefined ? {} : { 'x-forwarded-for': r.forwarded },
          };
          const req = { id: r.id, method: r.method, url: r.url, raw } as unknown as FastifyRequest;
          const fields = withRequest ? { req, ...extra } : extra;
          const written = directLines(capture(fast, trustProxy))(lvl, fields, message);
          const pinoLogger = capture(slow, trustProxy);
          if (message === undefined) pinoLogger[lvl](fields);
          else pinoLogger[lvl](fields, message);
          if (!written) {
            expect(fast).toEqual([]);
            return;
          }
          direct += 1;
          expect(withoutTime(fast[0])).toBe(withoutTime(slow[0]));
          // A logged request never shows its query string.
          if (withRequest && !('req' in extra)) {
            expect(JSON.parse(String(fast[0]))).toMatchObject({ req: { url: r.url.split('?')[0] } });
          }
        },
      ),
      2000,
    );
    // The direct path is the common one, not a corner the generator rarely reaches.
    expect(direct).toBeGreaterThan(200);
  });
});
