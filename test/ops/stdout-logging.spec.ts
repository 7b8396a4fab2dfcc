import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from '@jest/globals';
import { DIST, requireBuild } from '../support/processes.js';

beforeAll(requireBuild);

/** Runs `body` in a fresh Node process with `logger` (the product's root logger on stdout) in scope. */
function runLogging(body: string): { lines: () => string[]; exited: Promise<number | null> } {
  const logging = pathToFileURL(join(DIST, 'libs/platform/logging.js')).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { createRootLogger } from '${logging}';\n` + `const logger = createRootLogger('info', false);\n${body}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return { lines: () => out.split('\n').filter((l) => l !== ''), exited };
}

it('writes a lone line to stdout well before exit, though lines are written in blocks', async () => {
  const started = Date.now();
  const run = runLogging(`logger.info('alone'); setTimeout(() => {}, 3000);`);
  while (run.lines().length === 0 && Date.now() - started < 2500) await new Promise((r) => setTimeout(r, 20));
  expect(run.lines().map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['alone']);
  expect(Date.now() - started).toBeLessThan(2000);
  await run.exited;
});

it('loses no line when the process exits right after logging', async () => {
  const run = runLogging(`for (let i = 0; i < 100; i++) logger.info({ i }, 'line'); process.exit(3);`);
  expect(await run.exited).toBe(3);
  expect(run.lines().map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
});
