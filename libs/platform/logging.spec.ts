import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { createRootLogger, REDACTED_PATHS } from './logging.js';

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
