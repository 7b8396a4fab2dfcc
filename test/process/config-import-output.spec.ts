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
