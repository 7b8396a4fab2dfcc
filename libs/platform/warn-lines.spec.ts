import { describe, expect, it } from '@jest/globals';
import { AppLogger } from './app-logger.js';
import { BlockWriter } from './block-writer.js';
import { createRootLogger, plainLineOf, requestLineOf } from './logging.js';

/**
 * DESIGN 9 (issue 38, item 8): a line at `warn` and above reaches stdout before its call returns, with what
 * was pending before it; lines below stay in the block writer's block (written in blocks or on its timer).
 */
function stdoutLike(level: 'info' | 'debug' = 'info') {
  const written: string[] = [];
  const writer = new BlockWriter(1, {
    write: (_fd, buffer, offset) => {
      written.push(buffer.subarray(offset).toString('utf8'));
      return buffer.length - offset;
    },
  });
  const root = createRootLogger(level, false, writer);
  /** The messages of the lines written to the "file" so far. */
  const messages = (): unknown[] =>
    written
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { msg?: unknown }).msg);
  return { root, messages };
}

const REQUEST = { id: 'r1', method: 'GET', url: '/config-server/configs?host=h' };

describe('lines at warn and above are written at once; lines below are held', () => {
  it("through pino's own path, a child's included", () => {
    const { root, messages } = stdoutLike('debug');
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

  it('through the plain line builder, the request line builder and AppLogger', () => {
    const { root, messages } = stdoutLike();
    const plain = plainLineOf(root);
    const request = requestLineOf(root);
    const app = new AppLogger(root);

    expect(plain('info', { n: 1 }, 'held plain')).toBe(true);
    request('info', REQUEST, 200, 1.5, 'held request');
    app.log({ n: 2 }, 'held app', 'Ctx');
    expect(messages()).toEqual([]);

    expect(plain('warn', { n: 3 }, 'plain warn')).toBe(true);
    expect(messages()).toEqual(['held plain', 'held request', 'held app', 'plain warn']);
    request('error', REQUEST, 500, 2, 'request errored');
    expect(messages().at(-1)).toBe('request errored');
    app.warn({ n: 4 }, 'app warn', 'Ctx');
    expect(messages().at(-1)).toBe('app warn');
    app.error('app error', 'Ctx');
    expect(messages().at(-1)).toBe('app error');
  });

  it("a binding rejection's warning (AppLogger.line, as the binding logger writes it)", () => {
    const { root, messages } = stdoutLike();
    const app = new AppLogger(root);
    app.log('held', 'Ctx');
    const fields = { endpoint: '/config-server/configs', tokenHost: 'h1', requestedHost: 'h2', reason: 'host' };
    app.line('warn', 'TokenBinding', fields, 'Token host does not match requested host');
    expect(messages()).toEqual(['held', 'Token host does not match requested host']);
    // A field only pino writes (an object) takes pino's path: written at once too.
    app.line('warn', 'TokenBinding', { tokenSid: { not: 'a string' } }, 'mismatch');
    expect(messages().at(-1)).toBe('mismatch');
  });
});
