import { pino, type DestinationStream } from 'pino';

/** pino's own destination, sonic-boom. */
export type LogDestination = ReturnType<typeof pino.destination>;

/** Bytes of lines below `warn` held before a write: what a SIGKILL can lose at most. */
const HELD_BYTES = 4096;
/** DESIGN 9: a held line is written within 250 ms. */
const FLUSH_INTERVAL_MS = 250;
/** Held lines beyond this while the destination refuses writes (a full disk) are dropped, not kept in memory. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

const holding = new WeakSet<object>();

/**
 * A sonic-boom destination (DESIGN 9): lines are written in blocks of 4 KiB, at least every 250 ms (its
 * `periodicFlush`), and at once after a line at `warn` and above (`writeHeldLines`). `sync: true`: in async
 * mode sonic-boom's `flush` and `flushSync` return while a write is still in flight, so a warning could be
 * sent after the answer or out of order; sync writes finish before the call returns.
 */
export function logDestination(dest: number | string): LogDestination {
  const destination = pino.destination({
    dest,
    sync: true,
    minLength: HELD_BYTES,
    maxLength: MAX_PENDING_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
  });
  // A write error (pino already silences EPIPE) loses lines, never the request whose log call met it.
  destination.on('error', () => undefined);
  holding.add(destination);
  return destination;
}

/**
 * Writes what `destination` holds, when it is one `logDestination` made. sonic-boom's `flush`, not
 * `flushSync`: in sync mode both write synchronously, but `flushSync` also fsyncs (a disk flush per warning
 * when stdout is a file) and retries a write that failed with EPIPE for ever (the process would hang).
 */
export function writeHeldLines(destination: DestinationStream): void {
  if (holding.has(destination)) (destination as LogDestination).flush();
}

/** Whether `destination` holds lines back, so that a warning must write them (see `writeHeldLines`). */
export function holdsLines(destination: DestinationStream): boolean {
  return holding.has(destination);
}

let stdout: LogDestination | undefined;

/** Stdout for every logger in the process (one destination, so lines never interleave), written out at exit. */
export function stdoutDestination(): LogDestination {
  if (stdout !== undefined) return stdout;
  const destination = logDestination(1);
  process.once('exit', () => destination.flush());
  stdout = destination;
  return destination;
}
