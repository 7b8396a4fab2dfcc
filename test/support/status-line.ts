import { connect } from 'node:net';

/**
 * Writes `text` on a fresh TCP connection all at once and resolves with the status line that came back, or
 * how the connection failed without one: for refusals the client must get while it is still sending.
 * `readAfterMs` leaves the answer unread that long, as a slow client would: a reset sent meanwhile loses it.
 */
export function statusLineOf(port: number, text: string, readAfterMs = 0): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(text);
      if (readAfterMs > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), readAfterMs);
      }
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(/HTTP\/1\.1 [2-5]\d\d [^\r]*/.exec(answer)?.[0] ?? 'closed without an answer'));
    // A reset while writing (EPIPE, ECONNRESET): whatever was read before it is all the client gets.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(/HTTP\/1\.1 [2-5]\d\d [^\r]*/.exec(answer)?.[0] ?? `${error.code ?? 'error'} without an answer`);
    });
  });
}
