import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createRootLogger, REDACTED_PATHS } from './logging.js';

/** A root logger whose lines are kept, parsed. */
function capture(trustProxy = false): {
  logger: ReturnType<typeof createRootLogger>;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createRootLogger('info', trustProxy, sink), lines };
}

describe('REDACTED_PATHS', () => {
  it.each(REDACTED_PATHS.filter((path) => !path.includes('.')))(
    'censors a top-level %s handed to a log call',
    (key) => {
      const { logger, lines } = capture();
      logger.info({ [key]: 's3cr3t-value' }, 'x');
      expect(JSON.stringify(lines)).not.toContain('s3cr3t-value');
      expect(lines[0]).toMatchObject({ [key]: '[redacted]' });
    },
  );

  it('censors the jwt of JSON-RPC params', () => {
    const { logger, lines } = capture();
    logger.warn({ params: { jwt: 's3cr3t-value', serviceId: 'svc' } }, 'x');
    expect(lines[0]).toMatchObject({ params: { jwt: '[redacted]', serviceId: 'svc' } });
  });
});

describe('the req serializer', () => {
  const raw = (forwarded?: string) => ({
    headers: {
      authorization: 'Bearer s3cr3t-token',
      cookie: 'sid=s3cr3t-cookie',
      ...(forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }),
    },
    socket: { remoteAddress: '10.1.2.3' },
  });

  it('keeps id, method, path and address of whatever is logged as req: never headers or the query', () => {
    const { logger, lines } = capture();
    const headers = raw().headers;
    logger.info({ req: { id: 'r-1', method: 'GET', url: '/tags?q=s3cr3t-query', raw: raw(), headers } }, 'x');
    logger.info({ req: 'not a request' }, 'y');
    expect(JSON.stringify(lines)).not.toContain('s3cr3t');
    expect(lines[0]).toMatchObject({ req: { id: 'r-1', method: 'GET', url: '/tags', remoteAddress: '10.1.2.3' } });
    expect(Object.keys(lines[0]?.req as object).sort()).toEqual(['id', 'method', 'remoteAddress', 'url']);
    expect(lines[1]).toMatchObject({ req: {}, msg: 'y' });
  });

  it("gives the proxy's X-Forwarded-For hop as the address only with TRUST_PROXY", () => {
    const request = { id: 'r-2', method: 'PUT', url: '/tags/a?x=1', raw: raw('198.51.100.1, 192.0.2.44') };
    const trusted = capture(true);
    trusted.logger.info({ req: request }, 'x');
    expect(trusted.lines[0]).toMatchObject({ req: { url: '/tags/a', remoteAddress: '192.0.2.44' } });
    const untrusted = capture(false);
    untrusted.logger.info({ req: request }, 'x');
    expect(untrusted.lines[0]).toMatchObject({ req: { remoteAddress: '10.1.2.3' } });
  });

  it('writes the request line with its status and time, as logRequests passes them', () => {
    const { logger, lines } = capture();
    const req = { id: 'r-3', method: 'GET', url: '/x', raw: raw() };
    logger.info({ req, res: { statusCode: 200 }, responseTime: 1.5 }, 'request completed');
    expect(lines[0]).toMatchObject({
      level: 30,
      req: { id: 'r-3', method: 'GET', url: '/x' },
      res: { statusCode: 200 },
      responseTime: 1.5,
      msg: 'request completed',
    });
  });
});
