import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { pino, type Logger } from 'pino';
import { createRootLogger, plainLineOf, requestLineOf } from '../../libs/platform/logging.js';
import { assertProperty } from '../support/property.js';

/**
 * The request line and flat lines are built by Bindery itself for speed (docs/performance.md); pino stays
 * the definition of a line. Differential: for generated inputs, the line written must be pino's, byte for byte.
 */
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

describe('plain lines (property, differential against pino)', () => {
  const sink = (): { lines: string[]; stream: { write(line: string): boolean } } => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => lines.push(line) > 0 } };
  };
  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', minLength: 90, maxLength: 120 }),
    fc.constantFrom('a"b\\c', 'line\nbreak', '\ud800', 'x\udc00y', '😀', 'ü', ''),
  );
  const value = fc.oneof(
    text,
    fc.double(),
    fc.constantFrom(0, -0, 1e21, Number.NaN, Number.NEGATIVE_INFINITY),
    fc.boolean(),
    fc.constantFrom(null, undefined),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  );
  const key = fc.oneof(
    fc.constantFrom('endpoint', 'tokenSid', 'reason', 'context', 'msg', 'level', 'req', 'err', 'token', 'params'),
    fc.constantFrom('method', 'headers', 'socket', 'authorization', 'a-b', 'ü', '_x', '9lives'),
  );
  const request = { id: 'r-1', method: 'GET', url: '/x?q=1', raw: { headers: {}, socket: { remoteAddress: '::1' } } };

  /**
   * Runs `write` (ours) and `pinoWrite` (pino's) on roots of their own under a fixed clock: what ours writes,
   * when it writes, must be pino's line byte for byte, and when it declines it must write nothing.
   * Answers whether ours wrote.
   */
  const sameAsPino = (write: (root: Logger) => boolean, pinoWrite: (root: Logger) => void): boolean => {
    const ours = sink();
    const theirs = sink();
    const wrote = write(createRootLogger('info', false, ours.stream));
    pinoWrite(createRootLogger('info', false, theirs.stream));
    expect(ours.lines).toEqual(wrote ? theirs.lines : []);
    return wrote;
  };
  const withFixedClock = async (run: () => Promise<void>): Promise<void> => {
    const clock = jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
    try {
      await run();
    } finally {
      clock.mockRestore();
    }
  };
  const levels = fc.constantFrom<'info' | 'warn' | 'error'>('info', 'warn', 'error');

  it('writes what pino writes whenever it writes, and leaves the rest to pino', async () => {
    let written = 0;
    await withFixedClock(() =>
      assertProperty(
        'plain line',
        fc.property(
          fc.dictionary(key, value, { maxKeys: 6 }),
          fc.boolean(),
          fc.option(text, { nil: undefined }),
          levels,
          (generated, withRequest, message, level) => {
            const fields = withRequest ? { req: request, ...generated } : generated;
            const wrote = sameAsPino(
              (root) => plainLineOf(root)(level, fields, message),
              (root) => root[level](fields, message),
            );
            if (wrote) written += 1;
          },
        ),
        500,
      ),
    );
    // Not a vacuous pass: about a quarter of the generated lines are plain (95-140 of 500 in trials).
    expect(written).toBeGreaterThan(50);
  });

  it('writes a line with a head (request and context first) as pino writes { req, context, ...fields }', async () => {
    let written = 0;
    await withFixedClock(() =>
      assertProperty(
        'plain line with a head',
        fc.property(
          fc.dictionary(key, value, { maxKeys: 6 }),
          fc.option(fc.constant(request), { nil: undefined }),
          fc.oneof(fc.constantFrom('TokenBinding', ' padded ', 'a"b'), text),
          text,
          levels,
          (fields, req, context, message, level) => {
            const wrote = sameAsPino(
              (root) => plainLineOf(root)(level, fields, message, { request: req, context }),
              (root) => root[level]({ req, context, ...fields }, message),
            );
            if (wrote) written += 1;
          },
        ),
        500,
      ),
    );
    expect(written).toBeGreaterThan(50);
  });
});
