import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

/**
 * Every file path and code symbol the docs name in backticks exists (issue 40): a renamed file or method
 * must take its docs along. `docs/design.md` is the contract's copy, not ours to edit, and is left out.
 */

/** Names the docs may give that are not in this repository, each with why. */
const OUTSIDE = new Map<string, string>([
  ['DESIGN.md', "the design card's file, beside the repository (../shared)"],
  ['Leader', "Patroni's role name"],
  ['Deployment', 'a Kubernetes kind'],
  ['AsyncContextFrame', "Node's implementation of AsyncLocalStorage"],
]);
/** Written by `npm run bench`, not kept in git. */
const GENERATED = /^bench\/results(\/|$)/;

const PATH = /^(\.?[\w@-]+\/)*[\w.@-]+\.(ts|js|mjs|cjs|json|ya?ml|md|sh|sql|conf|html|css)$/;
const DIR_PATH = /^(apps|libs|test|scripts|bench|deploy|docs|\.ci)\/[\w./-]*$/;
/** `ClassName` or `ClassName.member`, optionally called: what a reader would search the code for. */
const SYMBOL = /^([A-Z][A-Za-z0-9]{3,})(?:\.([a-z][A-Za-z0-9]*))?(?:\(\))?$/;

interface Repository {
  readonly files: readonly string[];
  readonly source: string;
}

function repository(): Repository {
  const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const source = files
    // This file names the planted ones below: it would find them in itself.
    .filter((f) => /\.(ts|js|mjs|cjs)$/.test(f) && f !== 'test/ops/docs-references.spec.ts')
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  return { files, source };
}

/** What `text` (the doc at `doc`) names in backticks that the repository lacks. */
function staleReferences(doc: string, text: string, repo: Repository): string[] {
  const names = new Set(repo.files.map((f) => basename(f)));
  const stale: string[] = [];
  for (const [, raw] of text.matchAll(/`([^`\n]+)`/g)) {
    const token = (raw ?? '').trim().replace(/\/$/, '');
    if (OUTSIDE.has(token) || GENERATED.test(token)) continue;
    if (DIR_PATH.test(token) || (PATH.test(token) && token.includes('/'))) {
      const found =
        existsSync(token) || existsSync(join(dirname(doc), token)) || repo.files.some((f) => f.endsWith(`/${token}`));
      if (!found) stale.push(`path ${token}`);
    } else if (PATH.test(token)) {
      if (!names.has(token) && !existsSync(token)) stale.push(`file ${token}`);
    } else {
      const symbol = SYMBOL.exec(token);
      if (symbol === null || !/[a-z]/.test(symbol[1] ?? '')) continue;
      const [, name, member] = symbol;
      if (!new RegExp(`\\b${name}\\b`).test(repo.source)) stale.push(`symbol ${token}`);
      else if (member !== undefined && !new RegExp(`\\b${member}\\b`).test(repo.source)) stale.push(`member ${token}`);
    }
  }
  return stale;
}

describe('the docs name only what exists', () => {
  const repo = repository();
  const docs = repo.files.filter((f) => f.endsWith('.md') && f !== 'docs/design.md');

  it.each(docs)('%s', (doc) => {
    expect(staleReferences(doc, readFileSync(doc, 'utf8'), repo)).toEqual([]);
  });

  it('is not vacuous: a moved file, a missing class and a renamed method are caught', () => {
    const planted = 'See `libs/database/gone.repository.ts`, `NoSuchService` and `UnitOfWork.runTwice()`.';
    expect(staleReferences('docs/x.md', planted, repo)).toEqual([
      'path libs/database/gone.repository.ts',
      'symbol NoSuchService',
      'member UnitOfWork.runTwice()',
    ]);
    expect(staleReferences('docs/x.md', '`libs/database/repository.ts` and `UnitOfWork.run`', repo)).toEqual([]);
  });
});
