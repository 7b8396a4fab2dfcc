import { writeSync } from 'node:fs';

type WriteSync = (fd: number, buffer: Buffer, offset: number) => number;

const pause = new Int32Array(new SharedArrayBuffer(4));

export interface BlockWriterOptions {
  /** Pending characters that trigger a write (UTF-16 units: a threshold, not an exact byte count). */
  readonly blockSize?: number;
  /** The system call, replaceable in tests. */
  readonly write?: WriteSync;
}

/**
 * A pino destination that joins lines and writes them with one system call per block (and whenever
 * `flushSync` is called). sonic-boom's `minLength` mode did the same, but measured the UTF-8 length of the
 * whole pending block on every line and encoded each block twice: a warning line cost 4.35 µs with it, 3.24
 * without (Node 20; 3.85 and 2.90 on Node 24).
 */
export class BlockWriter {
  private lines: string[] = [];
  private pending = 0;
  private readonly blockSize: number;
  private readonly writeSync: WriteSync;

  constructor(
    private readonly fd: number,
    options: BlockWriterOptions = {},
  ) {
    this.blockSize = options.blockSize ?? 4096;
    this.writeSync = options.write ?? writeSync;
  }

  write(line: string): boolean {
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= this.blockSize) this.flushSync();
    return true;
  }

  /** Writes every pending line now, waiting out a full pipe (EAGAIN) as sonic-boom does. */
  flushSync(): void {
    if (this.pending === 0) return;
    const block = Buffer.from(this.lines.join(''), 'utf8');
    this.lines = [];
    this.pending = 0;
    let offset = 0;
    while (offset < block.length) {
      try {
        offset += this.writeSync(this.fd, block, offset);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A non-blocking stdout pipe is full: wait a moment for its reader.
        if (code === 'EAGAIN' || code === 'EBUSY') Atomics.wait(pause, 0, 0, 1);
        // Anything else (EPIPE: nobody reads stdout any more) loses the block, never the request that logged.
        else return;
      }
    }
  }
}
