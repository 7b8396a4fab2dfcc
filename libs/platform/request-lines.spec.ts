import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { AppLogger, logRequests } from './app-logger.js';
import { createRootLogger } from './logging.js';
import { databaseUnavailable, ProblemException, sendError } from './problem.js';
import { requestId } from './request-identity.js';
import { outsideRequest } from './request-scope.js';

const lines: Record<string, unknown>[] = [];
let instance: FastifyInstance;

/** A promise and the function that settles it, for work that runs when the test says. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

let leftBehind = gate();
let loggedLater = gate();
const answered = new Map<string, () => void>();

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const logger = new AppLogger(createRootLogger('info', false, sink));
  Logger.overrideLogger(logger);
  instance = new FastifyAdapter({ genReqId: requestId }).getInstance();
  logRequests(instance, logger);
  // After logRequests' own hook: its line is written and the request's scope left once this runs.
  instance.addHook('onResponse', (request, _reply, done) => {
    answered.get(request.id)?.();
    done();
  });
  // As Nest's ProblemFilter does: every error through sendError.
  instance.setErrorHandler((error, _request, reply) => sendError(reply, error));
  instance.get('/ready-down', () => Promise.reject(databaseUnavailable()));
  instance.get('/db-lost', () => Promise.reject(new Error('Connection terminated unexpectedly')));
  instance.get('/busy', () => Promise.reject(new ProblemException(503, 'busy', { headers: { 'retry-after': '1' } })));
  instance.get('/closing', (_request, reply) => reply.status(503).header('retry-after', '1').send('closing'));
  instance.get('/fault', () => Promise.reject(new Error('boom')));
  instance.get('/leaves-work', () => {
    new Logger('Handler').log('within the request');
    void leftBehind.opened.then(() => {
      new Logger('Background').log('after the answer');
      loggedLater.open();
    });
    return 'ok';
  });
  instance.get('/starts-background', async () => {
    const started = gate();
    const logged = gate();
    outsideRequest(() => {
      void started.opened.then(() => {
        new Logger('Background').warn('while the request is in flight');
        logged.open();
      });
    });
    started.open();
    await logged.opened;
    return 'ok';
  });
  await instance.ready();
});

afterAll(async () => {
  Logger.overrideLogger(true);
  await instance.close();
});

const linesOf = (id: string) => lines.filter((line) => (line.req as { id?: unknown } | undefined)?.id === id);

describe('an expected 503 (with Retry-After) is one warning line, without a stack', () => {
  it.each(['/ready-down', '/db-lost', '/busy', '/closing'])('%s', async (url) => {
    const id = `unavailable-${url.slice(1)}`;
    const before = lines.length;
    const res = await instance.inject({ method: 'GET', url, headers: { 'x-request-id': id } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(linesOf(id)).toEqual([
      expect.objectContaining({ level: 40, msg: 'request unavailable', res: { statusCode: 503 } }),
    ]);
    expect(lines.slice(before).filter((line) => line.req === undefined)).toEqual([]);
    expect(JSON.stringify(lines.slice(before))).not.toContain('"err"');
  });

  it("says why when the database refused: the error's first line, never a statement", async () => {
    await instance.inject({ method: 'GET', url: '/db-lost', headers: { 'x-request-id': 'unavailable-reason' } });
    expect(linesOf('unavailable-reason')[0]).toMatchObject({ reason: 'Connection terminated unexpectedly' });
  });

  it('while any other 5xx stays an error with its stack, and its request line an error too', async () => {
    const before = lines.length;
    const res = await instance.inject({ method: 'GET', url: '/fault', headers: { 'x-request-id': 'fault-1' } });
    expect(res.statusCode).toBe(500);
    const written = lines.slice(before);
    expect(written.find((line) => line.msg === 'unhandled error')).toMatchObject({
      level: 50,
      err: { message: 'boom', stack: expect.stringContaining('\n    at ') },
    });
    expect(linesOf('fault-1').at(-1)).toMatchObject({ level: 50, msg: 'request errored' });
  });
});

describe('lines of background work carry no request id', () => {
  it('work a request left behind logs without its id once the request is answered', async () => {
    leftBehind = gate();
    loggedLater = gate();
    const done = gate();
    answered.set('leaves-1', done.open);
    await instance.inject({ method: 'GET', url: '/leaves-work', headers: { 'x-request-id': 'leaves-1' } });
    await done.opened;
    leftBehind.open();
    await loggedLater.opened;
    expect(lines.find((line) => line.msg === 'within the request')).toMatchObject({ req: { id: 'leaves-1' } });
    const later = lines.find((line) => line.msg === 'after the answer');
    expect(later).toMatchObject({ context: 'Background' });
    expect(later).not.toHaveProperty('req');
  });

  it('work started outsideRequest logs without its id while the request is still in flight', async () => {
    await instance.inject({ method: 'GET', url: '/starts-background', headers: { 'x-request-id': 'starts-1' } });
    const line = lines.find((l) => l.msg === 'while the request is in flight');
    expect(line).toMatchObject({ level: 40, context: 'Background' });
    expect(line).not.toHaveProperty('req');
  });
});
