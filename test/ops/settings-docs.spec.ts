import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { SETTINGS_CATALOG, type SettingDoc } from '../../libs/platform/settings-catalog.js';

/**
 * The settings the code reads, the catalog the docs are written from, and the table in docs/deploy.md agree
 * (issue 40): a setting added, renamed or given another default in code must change the docs too.
 */
const SOURCES = [
  'libs/platform/settings.ts',
  'libs/platform/jwt-settings.ts',
  'libs/platform/config-store-settings.ts',
];

/** Each `helper(env, 'NAME'[, default])` call of the settings code: the name, and the default's source text. */
function readSettings(source: string): Map<string, string | undefined> {
  const read = new Map<string, string | undefined>();
  for (const m of source.matchAll(
    /\b(?:text|bool|port|positiveInt|url)\(env, '([A-Z0-9_]+)'(?:, ((?:[^()]|\([^()]*\))*?))?\)/g,
  )) {
    const [, name, fallback] = m;
    if (name !== undefined && !read.has(name)) read.set(name, fallback?.trim());
  }
  return read;
}

/** Where the catalog and the code disagree: names missing on either side, literal defaults not shown. */
function disagreements(code: Map<string, string | undefined>, catalog: readonly SettingDoc[]): string[] {
  const documented = new Map(catalog.map((s) => [s.name, s] as const));
  const found: string[] = [];
  for (const name of code.keys()) if (!documented.has(name)) found.push(`${name} is read but not documented`);
  for (const name of documented.keys()) if (!code.has(name)) found.push(`${name} is documented but never read`);
  for (const [name, fallback] of code) {
    // A literal default (30_000, true, 'info') must appear in the documented default; expressions are explained.
    const literal = /^(?:[\d_]+|true|false)$/.test(fallback ?? '')
      ? fallback?.replaceAll('_', '')
      : /^'([^']*)'$/.exec(fallback ?? '')?.[1];
    const shown = documented.get(name)?.default;
    if (literal !== undefined && shown !== undefined && !shown.includes(literal)) {
      found.push(`${name}: code default ${literal}, documented "${shown}"`);
    }
  }
  return found;
}

/** The rows of the settings table between docs/deploy.md's markers, cells trimmed. */
function documentedTable(text: string): SettingDoc[] {
  const block = /<!-- settings:begin[^>]*-->([\s\S]*?)<!-- settings:end -->/.exec(text)?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [name = '', fallback = '', meaning = ''] = line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim());
      return { name: name.replace(/^`|`$/g, ''), default: fallback, meaning };
    });
}

describe('settings: code, catalog and docs agree', () => {
  const code = new Map(SOURCES.flatMap((file) => [...readSettings(readFileSync(file, 'utf8'))]));

  it('reads at least the settings everyone sets', () => {
    for (const name of ['DATABASE_URL', 'API_PORT', 'JWT_ISSUER', 'CONFIG_KEYRING_FILE'])
      expect(code.has(name)).toBe(true);
  });

  it('documents every setting the code reads, with its default, and nothing else', () => {
    expect(disagreements(code, SETTINGS_CATALOG)).toEqual([]);
  });

  it('docs/deploy.md shows the catalog as it is (npm run docs:settings)', () => {
    expect(documentedTable(readFileSync('docs/deploy.md', 'utf8'))).toEqual(SETTINGS_CATALOG.map((s) => ({ ...s })));
  });

  it('is not vacuous: a setting left out, one never read and a changed default are caught', () => {
    const planted = SETTINGS_CATALOG.filter((s) => s.name !== 'API_PORT').map((s) =>
      s.name === 'DB_POOL_SIZE' ? { ...s, default: '`12`' } : s,
    );
    expect(disagreements(code, [...planted, { name: 'NOT_READ', default: 'unset', meaning: 'nothing' }])).toEqual([
      'API_PORT is read but not documented',
      'NOT_READ is documented but never read',
      'DB_POOL_SIZE: code default 10, documented "`12`"',
    ]);
  });
});
