import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { startController, type TestController } from '../support/controller.js';
import { writeIssuerKeyFile } from '../support/tokens.js';

const exec = promisify(execFile);

/** Runs `redocly lint` with its recommended rules; resolves to its output, failing on any error. */
async function lint(document: unknown): Promise<{ ok: boolean; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bindery-openapi-'));
  const file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(document));
  await writeFile(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
  try {
    const { stdout, stderr } = await exec(
      process.execPath,
      [
        'node_modules/@redocly/cli/bin/cli.js',
        'lint',
        '--config',
        join(dir, 'redocly.yaml'),
        '--format',
        'codeframe',
        file,
      ],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 1 << 24 },
    );
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

// Issue: both OpenAPI documents pass the recommended rules of a widely used linter, with no error.
describe('the OpenAPI documents pass `redocly lint` (recommended rules)', () => {
  let api: TestApi;
  let controller: TestController;
  beforeAll(async () => {
    // With the built-in issuer on, so its routes are linted too.
    api = await startApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
    controller = await startController();
  });
  afterAll(async () => {
    await api.close();
    await controller.close();
  });

  it('the api document', async () => {
    const doc: unknown = (await call(api, 'GET', '/docs/openapi.json')).json();
    const result = await lint(doc);
    expect(result.output).toMatch(/Woohoo! Your API description is valid|validated/);
    expect(result.output).not.toMatch(/Warning was generated/);
    expect({ ok: result.ok, output: result.ok ? '' : result.output }).toEqual({ ok: true, output: '' });
  }, 60_000);

  it('the controller document', async () => {
    const doc: unknown = await (await fetch(`${controller.httpUrl}/docs/openapi.json`)).json();
    const result = await lint(doc);
    expect(result.output).not.toMatch(/Warning was generated/);
    expect({ ok: result.ok, output: result.ok ? '' : result.output }).toEqual({ ok: true, output: '' });
  }, 60_000);
});
