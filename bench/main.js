// `npm run bench [-- names...] [--smoke] [--quick] [--profile]`: installs bench/'s own dependencies when missing,
// builds the product, runs each benchmark in its own process and prints one table of ratios. Only Node's
// built-in modules here: this file runs before bench/node_modules exists.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const BENCH = import.meta.dirname;
const ROOT = resolve(BENCH, '..');
const ALL = [
  'auth',
  'filter',
  'peer',
  'storm',
  'reject',
  'token',
  'watch',
  'batch',
  'events',
  'config',
  'config-history',
  'rewrap',
  'push',
  'scale',
];
const args = process.argv.slice(2);
const USAGE = `usage: npm run bench [-- ${ALL.join('|')} ...] [--smoke] [--quick] [--profile] [--no-build]`;
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(
    `${USAGE}\nBuilds the product, runs each named benchmark (all by default) in its own process and prints one\n` +
      'table of ratios, also written to bench/results/. --smoke: short runs; --quick: scale at a hundredth\n' +
      '(implied by --smoke); --profile: CPU profiles; --no-build: use dist/ as it is. Installs bench/\n' +
      'dependencies when missing. docs/performance.md.\n',
  );
  process.exit(0);
}
const smoke = args.includes('--smoke') || /^(1|true)$/i.test(process.env.BENCH_SMOKE ?? '');
// Only scale reads it (a hundredth of its data); its results are kept apart from a full run's.
const quick = args.includes('--quick');
const flags = args.filter((a) => a.startsWith('--'));
const unknownFlags = flags.filter((f) => !['--smoke', '--quick', '--profile', '--no-build'].includes(f));
const names = args.filter((a) => !a.startsWith('--'));
const unknown = names.filter((n) => !ALL.includes(n));
if (unknown.length > 0 || unknownFlags.length > 0) {
  process.stderr.write(`unknown: ${[...unknown, ...unknownFlags].join(' ')}\n${USAGE}\n`);
  process.exit(2);
}
const selected = names.length > 0 ? names : ALL;

function must(command, commandArgs, options) {
  const result = spawnSync(command, commandArgs, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    process.stderr.write(`bench: ${command} ${commandArgs.join(' ')} failed\n`);
    process.exit(1);
  }
}

if (!existsSync(join(ROOT, 'node_modules', 'typescript'))) {
  process.stderr.write('bench: installing the product (npm ci)\n');
  must('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT });
}
if (!existsSync(join(BENCH, 'node_modules', 'autocannon'))) {
  process.stderr.write('bench: installing bench/ dependencies (npm ci --prefix bench)\n');
  must('npm', ['ci', '--prefix', BENCH, '--no-audit', '--no-fund'], { cwd: ROOT });
}
if (!flags.includes('--no-build')) must('npm', ['run', 'build', '--silent'], { cwd: ROOT });

/** Runs one benchmark; its stderr passes through, its stdout's last `BENCH_RESULT` line is the result. */
function runOne(name) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(BENCH, `${name}.js`), ...flags], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => {
      const line = out.split('\n').findLast((l) => l.startsWith('BENCH_RESULT '));
      if (line !== undefined) return done(JSON.parse(line.slice('BENCH_RESULT '.length)));
      done({ name, error: `exited with code ${code} and no result`, rows: [], notes: [] });
    });
  });
}

const results = [];
for (const name of selected) results.push(await runOne(name));

const mode = smoke ? 'smoke' : quick ? 'quick' : 'full';
const lines = [`Bindery benchmarks, ${mode} mode, ${new Date().toISOString()}, Node ${process.versions.node}`, ''];
// Imported only now: lib.js needs bench/'s dependencies, which this script may just have installed.
const { formatTable } = await import('./lib.js');
lines.push(formatTable(results).trimEnd());
lines.push('');
for (const result of results) {
  for (const note of result.notes ?? []) lines.push(`- ${result.name}: ${note}`);
  if (result.error !== undefined) lines.push(`- ${result.name}: ${result.error}`);
}
const text = `${lines.join('\n')}\n`;
process.stdout.write(`\n${text}`);
mkdirSync(join(BENCH, 'results'), { recursive: true });
writeFileSync(join(BENCH, 'results', `latest-${mode}.md`), text);
writeFileSync(join(BENCH, 'results', `latest-${mode}.json`), `${JSON.stringify(results, null, 2)}\n`);
process.exit(results.some((r) => r.error !== undefined) ? 1 : 0);
