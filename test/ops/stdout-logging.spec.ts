import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from '@jest/globals';
import { DIST, requireBuild } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

beforeAll(requireBuild);

/** Runs `body` in a fresh Node process with `logger` (the product's root logger on stdout) in scope. */
function runLogging(
  body: string,
  { pausedMs = 0 }: { pausedMs?: number } = {},
): { lines: () => string[]; exited: Promise<number | null>; running: () => boolean; stop: () => void } {
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
  // Reading starts late when asked: the child's writes meet a full pipe meanwhile.
  child.stdout.pause();
  setTimeout(() => child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8'))).resume(), pausedMs);
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  return {
    lines: () => out.split('\n').filter((l) => l !== ''),
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    stop: () => child.kill('SIGKILL'),
  };
}

it('writes a lone line to stdout well before exit, though lines are written in blocks', async () => {
  // The child stays up for 20 s after logging: the line must arrive while it still runs (the block writer's
  // timer), whatever a loaded machine spends starting Node.
  const run = runLogging(`logger.info('alone'); setTimeout(() => {}, 20_000);`);
  await waitFor(() => run.lines().length > 0 || !run.running(), 'the line or the exit', 20_000);
  expect(run.running()).toBe(true);
  expect(run.lines().map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['alone']);
  run.stop();
  await run.exited;
});

it('loses no line while stdout is a full pipe nobody reads for a while', async () => {
  // 8 MiB of lines: far more than a pipe holds, so writes meet a full pipe until the reader resumes.
  const run = runLogging(
    `const pad = 'x'.repeat(1000); for (let i = 0; i < 8000; i++) logger.info({ i, pad }, 'line');`,
    {
      pausedMs: 500,
    },
  );
  expect(await run.exited).toBe(0);
  const seen = run.lines().map((l) => (JSON.parse(l) as { i: number }).i);
  expect(seen).toEqual(Array.from({ length: 8000 }, (_, i) => i));
});

it('loses no line when the process exits right after logging', async () => {
  const run = runLogging(`for (let i = 0; i < 100; i++) logger.info({ i }, 'line'); process.exit(3);`);
  expect(await run.exited).toBe(3);
  expect(run.lines().map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
});
