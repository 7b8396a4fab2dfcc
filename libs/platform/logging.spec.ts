import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { REDACTED_PATHS } from './logging.js';

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
