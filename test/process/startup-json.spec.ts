import { describe, expect, it } from '@jest/globals';
import { ISSUER, writeJwksFile } from '../support/tokens.js';
import { jsonLines } from '../support/log-lines.js';
import { requireBuild, run } from '../support/processes.js';

describe('every line a process writes is a JSON log line, from its first (DESIGN 9)', () => {
  it.each(['apps/api/main.js', 'apps/controller/main.js'])(
    '%s with an unreachable database: JSON lines naming the failed connect, then exit 1',
    async (entry) => {
      requireBuild();
      const spawned = run(entry, [], {
        // Port 1: nothing listens, every connect is refused at once.
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/bindery',
        JWT_JWKS_FILE: writeJwksFile(),
        JWT_ISSUER: ISSUER,
        CONTROLLER_HOST_ID: 'h-json',
        API_PORT: '0',
        CONTROLLER_PORT: '0',
        LISTEN_HOST: '127.0.0.1',
      });
      expect(await spawned.exit(60_000)).toBe(1);
      const lines = jsonLines(spawned.output());
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.some((line) => /ECONNREFUSED/.test(JSON.stringify(line.err ?? '')))).toBe(true);
      expect(typeof lines.at(-1)?.level).toBe('number');
    },
    90_000,
  );
});
