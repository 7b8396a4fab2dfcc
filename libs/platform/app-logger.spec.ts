import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { AppLogger } from './app-logger.js';
import { createRootLogger } from './logging.js';

function capture(level: 'info' | 'warn' = 'info'): { logger: AppLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: new AppLogger(createRootLogger(level, false, sink)), lines };
}

describe('AppLogger (what Nest Logger calls become)', () => {
  it.each([
    [
      'fields and a message',
      [{ pruned: 3 }, 'pruned old events', 'Events'],
      { context: 'Events', pruned: 3, msg: 'pruned old events' },
    ],
    [
      'a message',
      ['control session reconnected', 'ControlSession'],
      { context: 'ControlSession', msg: 'control session reconnected' },
    ],
    ['a message without a context', ['plain'], { msg: 'plain' }],
    ['fields without a message', [{ limit: 5 }, 'Gateway'], { context: 'Gateway', limit: 5 }],
  ])('writes %s', (_name, args, expected) => {
    const { logger, lines } = capture();
    const [message, ...params] = args;
    logger.log(message, ...params);
    expect(lines).toEqual([expect.objectContaining({ level: 30, ...expected })]);
  });

  it('line() writes what new Logger(context).warn(fields, message) writes, and nothing below its level', () => {
    const fields = { endpoint: '/config-server/configs', tokenSid: 'svc-a', requestedHost: null, reason: 'sid' };
    const direct = capture();
    direct.logger.line('warn', 'TokenBinding', fields, 'token binding rejected: x');
    const viaNest = capture();
    viaNest.logger.warn(fields, 'token binding rejected: x', 'TokenBinding');
    expect(direct.lines).toEqual([{ ...viaNest.lines[0], time: direct.lines[0]?.time }]);
    expect(direct.lines[0]).toMatchObject({ level: 40, context: 'TokenBinding', tokenSid: 'svc-a', reason: 'sid' });
    const quiet = capture('warn');
    quiet.logger.line('info', 'TokenBinding', fields, 'not written');
    expect(quiet.lines).toEqual([]);
  });

  it('writes an Error as err with its stack, through the safe serializer', () => {
    const { logger, lines } = capture();
    logger.error(new Error('boom'), 'Errors');
    expect(lines[0]).toMatchObject({ level: 50, context: 'Errors', err: { type: 'Error', message: 'boom' } });
    expect(String((lines[0]?.err as { stack?: string }).stack)).toContain('\n    at ');
  });

  it("turns Nest's error(message, stack, context) into err", () => {
    const { logger, lines } = capture();
    logger.error('Unhandled', 'Error: Unhandled\n    at somewhere (file.js:1:1)', 'ExceptionsHandler');
    expect(lines[0]).toMatchObject({
      level: 50,
      context: 'ExceptionsHandler',
      err: { message: 'Unhandled', stack: 'Error: Unhandled\n    at somewhere (file.js:1:1)' },
    });
  });

  it('writes nothing below its level, and serves Nest Logger instances once installed', () => {
    const { logger, lines } = capture('warn');
    Logger.overrideLogger(logger);
    try {
      new Logger('Quiet').log('not written');
      new Logger('Loud').warn({ reason: 'r' }, 'written');
    } finally {
      Logger.overrideLogger(true);
    }
    expect(lines).toEqual([expect.objectContaining({ level: 40, context: 'Loud', reason: 'r', msg: 'written' })]);
  });

  it('redacts secrets handed to it', () => {
    const { logger, lines } = capture();
    logger.warn({ token: 's3cr3t', clientId: 'c' }, 'x', 'Issuer');
    expect(JSON.stringify(lines)).not.toContain('s3cr3t');
  });
});
