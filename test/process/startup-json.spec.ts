import { describe, expect, it } from '@jest/globals';
import { ISSUER, writeJwksFile } from '../support/tokens.js';
import { requireBuild, run } from '../support/processes.js';

/** Each line of `output`, parsed; a line that is not JSON fails with the line itself. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

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
