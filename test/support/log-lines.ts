import { Writable } from 'node:stream';

/** The JSON log lines written to it, parsed (and raw), for assertions about what is (not) logged. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      this.raw.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
}

/**
 * The JSON lines in a process's `output`. Every non-empty line must be one (a line that is not fails with
 * the line itself), unless `others: 'skip'`: then lines that are not JSON are left out, as is a last line
 * still being written.
 */
export function jsonLines<T = Record<string, unknown>>(
  output: string,
  { others = 'fail' }: { others?: 'fail' | 'skip' } = {},
): T[] {
  return output.split('\n').flatMap((line) => {
    if (line.trim() === '' || (others === 'skip' && !line.startsWith('{'))) return [];
    try {
      return [JSON.parse(line) as T];
    } catch {
      if (others === 'skip') return [];
      throw new Error(`not a JSON log line: ${line}`);
    }
  });
}
