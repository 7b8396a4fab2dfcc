import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import type { FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { createRootLogger, requestLineWriter } from '#platform';
import { assertProperty } from '../support/binding-space.js';

/** A root logger as the processes build it, writing into `lines`. */
function capture(lines: string[], trustProxy: boolean): ReturnType<typeof createRootLogger> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return createRootLogger('info', trustProxy, sink);
}

const withoutTime = (line: string | undefined): string => String(line).replace(/"time":\d+/, '"time":0');

const text = fc.string({ unit: 'binary', maxLength: 60 });
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

describe('the request completed line', () => {
  it('is byte for byte what pino writes for the same request, over arbitrary requests', async () => {
    await assertProperty(
      'request line',
      fc.property(
        request,
        fc.integer({ min: 100, max: 499 }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        fc.boolean(),
        (r, statusCode, responseTime, trustProxy) => {
          const fast: string[] = [];
          const slow: string[] = [];
          const raw = {
            socket: { remoteAddress: r.remoteAddress },
            headers: r.forwarded === undefined ? {} : { 'x-forwarded-for': r.forwarded },
          };
          const req = { id: r.id, method: r.method, url: r.url, raw } as unknown as FastifyRequest;
          requestLineWriter(capture(fast, trustProxy))(req, statusCode, responseTime);
          capture(slow, trustProxy).info({ req, res: { statusCode }, responseTime }, 'request completed');
          expect(withoutTime(fast[0])).toBe(withoutTime(slow[0]));
          // And never the query string.
          expect(JSON.parse(String(fast[0]))).toMatchObject({ req: { url: r.url.split('?')[0] } });
        },
      ),
      500,
    );
  });
});
