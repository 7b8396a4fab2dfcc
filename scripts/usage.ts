/**
 * Every script's `--help` / `-h`: its usage on stdout and exit 0, before it reads settings, opens a
 * database or starts anything. Called first in each script's body.
 */
export function answerHelp(usage: string, argv: readonly string[] = process.argv.slice(2)): void {
  // After `--` an argument is an operand, not a flag.
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  if (!flags.includes('--help') && !flags.includes('-h')) return;
  process.stdout.write(`${usage.trimEnd()}\n`);
  process.exit(0);
}

/** "1 file", "2 files": a summary line reads as a sentence. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
