import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { testDatabaseEnv } from '../support/database.js';
import { requireBuild, run } from '../support/processes.js';

/** `npm run config:import`'s summary reads as a sentence: "1 file", "1 property", never "1 files". */
describe('config:import output', () => {
  it.each([
    ['docs/examples/files', 'file', 'and 1 file of kind file'],
    ['docs/examples/certs', 'cert', 'and 1 file of kind cert'],
  ])(
    'one file in %s: %s',
    async (folder, kind, summary) => {
      requireBuild();
      await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
      const host = unique('imp-out');
      const args = ['--host', host, '--serviceId', 'petstore', 'docs/examples/values.yml', folder, '--kind', kind];
      const imported = run('scripts/config-import.js', args, testDatabaseEnv());
      expect(await imported.exit()).toBe(0);
      expect(imported.output()).toMatch(new RegExp(`replaced \\d+ properties ${summary} of layer host=${host}`));
    },
    60_000,
  );
});

/**
 * A mistake in what the files hold is no usage error: one line saying what and where, exit 1, without the
 * usage; a mistake on the command line gets the usage, exit 2 (issue 40: a newcomer saw the whole usage
 * after a bad values file and looked for the mistake in their command).
 */
describe('config:import errors', () => {
  const layer = ['--host', 'imp-err', '--serviceId', 'petstore'];

  it.each([
    ['a key that is not configName.propertyName', 'values.yml', 'server: { httpPort: 1 }\n'],
    ['invalid YAML', 'values.yml', 'a.b: [\n'],
    ['a file whose name cannot be served', join('files', 'a b.txt'), 'x'],
  ])(
    'in the files (%s): only the error, naming the file, exit 1',
    async (_, name, text) => {
      requireBuild();
      const dir = await mkdtemp(join(tmpdir(), 'bindery-import-'));
      await mkdir(join(dir, 'files'));
      await writeFile(join(dir, name), text);
      const path = join(dir, name.startsWith('files') ? 'files' : name);
      const imported = run('scripts/config-import.js', [...layer, path], testDatabaseEnv());
      expect(await imported.exit()).toBe(1);
      // The YAML parser's error goes on with a picture of the line it names.
      const lines = imported.output().trimEnd().split('\n');
      expect(lines[0]).toMatch(new RegExp(`^config:import: ${join(dir, name).replace(/[.+]/g, '\\$&')}: \\S`));
      expect(imported.output()).not.toContain('usage:');
    },
    30_000,
  );

  it('on the command line: the mistake, then the usage, exit 2', async () => {
    requireBuild();
    const imported = run('scripts/config-import.js', ['--host', 'imp-err', 'docs/examples/values.yml'], {});
    expect(await imported.exit()).toBe(2);
    const lines = imported.output().split('\n');
    expect(lines[0]).toMatch(/^config:import: \S/);
    expect(lines[1]).toMatch(/^usage: npm run config:import\b/);
  });
});
