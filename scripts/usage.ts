import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * Every script's command line, in one place: `--help` / `-h` prints its usage (exit 0) before it reads
 * settings, opens a database or starts anything; a usage error (an unknown option, a missing or bad value,
 * an operand it does not take) is one line naming it, then the usage, exit 2. Errors in what a script reads
 * or does (a bad file, a refused value, an unreachable database) are one line without the usage, exit 1.
 */

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Command<O extends Options = Options> {
  /** The npm script's name, which starts every line it prints (`client:create`). */
  readonly name: string;
  readonly usage: string;
  /** Its options, for `util.parseArgs` (strict: any other is refused). */
  readonly options: O;
  /** Whether it takes operands (files, a sub-command); without, any operand is refused. */
  readonly positionals?: boolean;
}

/** `--help` / `-h`: the usage on stdout and exit 0. Called first, so it wins over any other mistake. */
export function answerHelp(usage: string, argv: readonly string[] = process.argv.slice(2)): void {
  // After `--` an argument is an operand, not a flag.
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  if (!flags.includes('--help') && !flags.includes('-h')) return;
  process.stdout.write(`${usage.trimEnd()}\n`);
  process.exit(0);
}

/**
 * A usage error: `name: message`, then the usage, on stderr; exit code 2. A message of `util.parseArgs` names
 * the option or operand ("Unknown option '--nope'") and is kept to that, without its hint on operands that
 * start with a dash.
 */
export function refuseUsage(command: Pick<Command, 'name' | 'usage'>, message: string): never {
  const line = (message.split('\n')[0] ?? '').replace(/\. To specify a positional .*$/, '');
  process.stderr.write(`${command.name}: ${line}\n${command.usage.trimEnd()}\n`);
  process.exit(2);
}

/** Answers `--help`, then parses `argv` with `util.parseArgs` (strict), refusing any mistake as a usage error. */
export function parseCommandLine<const O extends Options>(
  command: Command<O>,
  argv: readonly string[] = process.argv.slice(2),
) {
  answerHelp(command.usage, argv);
  try {
    return parseArgs({
      args: [...argv],
      options: command.options,
      strict: true,
      allowPositionals: command.positionals ?? false,
    });
  } catch (error) {
    return refuseUsage(command, (error as Error).message);
  }
}

/** "1 file", "2 files": a summary line reads as a sentence. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
