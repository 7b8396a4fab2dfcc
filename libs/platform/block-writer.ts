import { writeSync } from 'node:fs';

type WriteSync = (fd: number, buffer: Buffer, offset: number) => number;

const pause = new Int32Array(new SharedArrayBuffer(4));

export interface BlockWriterOptions {
  /** Pending bytes that trigger a write. */
  readonly blockSize?: number;
  /** The system call, replaceable in tests. */
  readonly write?: WriteSync;
}

/** UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

/**
 * A pino destination that joins lines and writes them with one system call per block (and whenever
 * `flushSync` is called). Each line is encoded once, straight into the block's buffer. sonic-boom's
 * `minLength` mode did the same, but measured the UTF-8 length of the whole pending block on every line
 * and encoded each block twice: a warning line cost 4.35 µs with it, 3.24 joining strings, less now.
 */
export class BlockWriter {
  private readonly block: Buffer;
  private used = 0;
  private readonly blockSize: number;
  private readonly writeSync: WriteSync;

  constructor(
    private readonly fd: number,
    options: BlockWriterOptions = {},
  ) {
    this.blockSize = options.blockSize ?? 16_384;
    this.writeSync = options.write ?? writeSync;
    // Room for a full block plus one more line of the usual size; a longer line is written on its own.
    this.block = Buffer.allocUnsafe(this.blockSize + 4096 * MAX_BYTES_PER_UNIT);
  }

  write(line: string): boolean {
    if (this.used + line.length * MAX_BYTES_PER_UNIT > this.block.length) {
      this.flushSync();
      if (line.length * MAX_BYTES_PER_UNIT > this.block.length) {
        this.writeAll(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    this.used += this.block.write(line, this.used, 'utf8');
    if (this.used >= this.blockSize) this.flushSync();
    return true;
  }

  /** Writes every pending line now. */
  flushSync(): void {
    if (this.used === 0) return;
    const pending = this.block.subarray(0, this.used);
    this.used = 0;
    this.writeAll(pending);
  }

  /** Writes all of `bytes`, waiting out a full pipe (EAGAIN) as sonic-boom does. */
  private writeAll(bytes: Buffer): void {
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += this.writeSync(this.fd, bytes, offset);
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
