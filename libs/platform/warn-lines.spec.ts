import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppLogger, logRequests } from './app-logger.js';
import { logDestination } from './log-destination.js';
import { createRootLogger } from './logging.js';
import { requestId } from './request-identity.js';

/**
 * DESIGN 9 on pino's own destination (sonic-boom, as stdout gets it), writing to a file: a line at `warn` and
 * above is in the file before its call returns, with what was held before it; lines below are held (4 KiB)
 * and written within 250 ms.
 */
function fileLogger(level: 'info' | 'debug' = 'info') {
  const file = join(mkdtempSync(join(tmpdir(), 'bindery-log-')), 'out.log');
  const root = createRootLogger(level, false, logDestination(file));
  const lines = (): Record<string, unknown>[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { root, lines, messages: (): unknown[] => lines().map((line) => line.msg) };
}

afterEach(() => {
  jest.useRealTimers();
  Logger.overrideLogger(true);
});

describe('lines at warn and above are written at once; lines below are held', () => {
  it("through pino's own calls, a child's included", () => {
    const { root, messages } = fileLogger('debug');
    root.debug('held debug');
    root.info({ nested: { a: 1 } }, 'held info');
    expect(messages()).toEqual([]);
    root.warn({ nested: { a: 1 } }, 'warn');
    expect(messages()).toEqual(['held debug', 'held info', 'warn']);
    root.child({ c: 1 }).info('held child');
    root.child({ c: 1 }).error(new Error('boom'), 'child error');
    expect(messages()).toEqual(['held debug', 'held info', 'warn', 'held child', 'child error']);
    root.fatal('fatal');
    expect(messages().at(-1)).toBe('fatal');
  });

  it("through AppLogger, Nest's Logger and a binding rejection's line()", () => {
    const { root, messages } = fileLogger();
    const app = new AppLogger(root);
    app.log({ n: 1 }, 'held app', 'Ctx');
    expect(messages()).toEqual([]);
    app.warn({ n: 2 }, 'app warn', 'Ctx');
    expect(messages()).toEqual(['held app', 'app warn']);
    app.log('held again', 'Ctx');
    app.line('warn', 'TokenBinding', { tokenHost: 'h1', requestedHost: 'h2' }, 'Token host does not match');
    expect(messages().slice(-2)).toEqual(['held again', 'Token host does not match']);
    Logger.overrideLogger(app);
    new Logger('Errors').error('nest error');
    expect(messages().at(-1)).toBe('nest error');
  });

  it('writes held lines within 250 ms though nothing else is logged', () => {
    jest.useFakeTimers();
    const { root, messages } = fileLogger();
    root.info('alone');
    jest.advanceTimersByTime(249);
    expect(messages()).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(messages()).toEqual(['alone']);
  });

  it('writes a block once 4 KiB are held', () => {
    const { root, messages } = fileLogger();
    // Lines of about 1,080 bytes: three are held, the fourth makes a block.
    const pad = 'x'.repeat(1000);
    for (let i = 0; i < 3; i += 1) root.info({ pad }, `line ${i}`);
    expect(messages()).toEqual([]);
    root.info({ pad }, 'line 3');
    expect(messages()).toEqual(['line 0', 'line 1', 'line 2', 'line 3']);
  });
});

describe('a warning logged while a request is handled', () => {
  it('is in the file, with its request id, before the answer is sent', async () => {
    const { root, lines } = fileLogger();
    Logger.overrideLogger(new AppLogger(root));
    const instance = new FastifyAdapter({ genReqId: requestId }).getInstance();
    logRequests(instance, new AppLogger(root));
    let seenBeforeAnswer: Record<string, unknown>[] = [];
    instance.addHook('onSend', (_request, _reply, payload, done) => {
      seenBeforeAnswer = lines();
      done(null, payload);
    });
    instance.get('/refuse', () => {
      new Logger('Handler').log('held while handling');
      new Logger('Handler').warn({ reason: 'host' }, 'refused');
      return { refused: true };
    });
    const res = await instance.inject({ method: 'GET', url: '/refuse', headers: { 'x-request-id': 'warn-1' } });
    expect(res.statusCode).toBe(200);
    expect(seenBeforeAnswer.map((line) => line.msg)).toEqual(['held while handling', 'refused']);
    expect(seenBeforeAnswer[1]).toMatchObject({
      level: 40,
      context: 'Handler',
      reason: 'host',
      req: { id: 'warn-1', method: 'GET' },
    });
    await instance.close();
  });
});
