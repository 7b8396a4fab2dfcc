import { Writable } from 'node:stream';
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { pino } from 'pino';
import { assertProperty } from '../../test/support/binding-space.js';
import { createRootLogger, REDACTED_PATHS, requestLineOf } from './logging.js';

describe('REDACTED_PATHS', () => {
  it.each(['authorization', 'token', 'jwt', 'client_secret', 'clientSecret', 'access_token'])(
    'censors a top-level %s handed to a log call',
    (key) => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink).info({ [key]: 's3cr3t-value' }, 'x');
      expect(lines.join('')).not.toContain('s3cr3t-value');
      expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ [key]: '[redacted]' });
    },
  );
});

describe('the req serializer', () => {
  it('keeps id, method, path and address of whatever is logged as req: never headers or the query', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const raw = {
      headers: { authorization: 'Bearer s3cr3t-token', cookie: 'sid=s3cr3t-cookie' },
      socket: { remoteAddress: '10.1.2.3' },
    };
    const logger = createRootLogger('info', false, sink);
    logger.info({ req: { id: 'r-1', method: 'GET', url: '/tags?q=s3cr3t-query', raw, headers: raw.headers } }, 'x');
    logger.info({ req: 'not a request' }, 'y');
    expect(lines.join('')).not.toContain('s3cr3t');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      req: { id: 'r-1', method: 'GET', url: '/tags', remoteAddress: '10.1.2.3' },
    });
    expect(Object.keys((JSON.parse(lines[0] ?? '{}') as { req: object }).req).sort()).toEqual([
      'id',
      'method',
      'remoteAddress',
      'url',
    ]);
    expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ req: {}, msg: 'y' });
  });
});

describe('the request line (property, differential against pino)', () => {
  /** Lines written to a sink, as the block writer receives them. */
  const sink = (): { lines: string[]; stream: { write(line: string): boolean } } => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => lines.push(line) > 0 } };
  };
  const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0xff }).map((c) => String.fromCharCode(c)) });
  const request = fc.record({
    id: fc.oneof(fc.uuid(), fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/)),
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    // Node's parser hands over latin1 characters; quotes and backslashes included.
    url: fc
      .tuple(printable, fc.option(printable))
      .map(([path, query]) => `/${path}${query === null ? '' : `?${query}`}`),
    remoteAddress: fc.option(fc.constantFrom('127.0.0.1', '::1', '10.0.0.7'), { nil: undefined }),
    forwarded: fc.option(fc.constantFrom('203.0.113.9', '198.51.100.1, 192.0.2.44'), { nil: undefined }),
  });

  it('writes byte for byte the line pino writes for the same request, status and time', async () => {
    const clock = jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
    try {
      await assertProperty(
        'request line',
        fc.property(
          request,
          fc.boolean(),
          fc.constantFrom(200, 204, 304, 400, 403, 404, 500, 503),
          fc.oneof(fc.double({ min: 0, max: 60_000 }), fc.constantFrom(0, 0.5, Number.NaN, Number.POSITIVE_INFINITY)),
          fc.constantFrom<'info' | 'error'>('info', 'error'),
          (fields, trustProxy, statusCode, responseTime, level) => {
            const headers = fields.forwarded === undefined ? {} : { 'x-forwarded-for': fields.forwarded };
            const req = { ...fields, raw: { headers, socket: { remoteAddress: fields.remoteAddress } } };
            const message = level === 'error' ? 'request errored' : 'request completed';
            const ours = sink();
            const theirs = sink();
            requestLineOf(createRootLogger('info', trustProxy, ours.stream))(
              level,
              req,
              statusCode,
              responseTime,
              message,
            );
            createRootLogger('info', trustProxy, theirs.stream)[level](
              { req, res: { statusCode }, responseTime },
              message,
            );
            expect(ours.lines).toEqual(theirs.lines);
          },
        ),
        300,
      );
    } finally {
      clock.mockRestore();
    }
  });

  it('goes through pino for a logger createRootLogger did not make', () => {
    const theirs = sink();
    const logger = pino({ base: { app: 'other' } }, theirs.stream);
    requestLineOf(logger)('info', { id: 'r-1', method: 'GET', url: '/x' }, 200, 1.5, 'request completed');
    expect(JSON.parse(theirs.lines[0] ?? '{}')).toMatchObject({
      app: 'other',
      res: { statusCode: 200 },
      msg: 'request completed',
    });
  });
});
