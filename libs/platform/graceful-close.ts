import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.js';

/** How long an idle connection may still deliver a request once the process is stopping (answered 503). */
const IDLE_GRACE_MS = 1000;
/** Seconds a client is asked to wait before retrying, here or (sooner) on another replica. */
const CLOSING_RETRY_AFTER_SEC = 1;

/**
 * SIGTERM without a lost or unexplained answer (DESIGN 15, rolling upgrades): once the app starts closing,
 * every request is answered 503 problem+json with `Retry-After` and `Connection: close`, and a connection
 * with no request in flight gets IDLE_GRACE_MS to deliver one before it is ended. Node's own `close()`
 * destroys idle connections at once, a request on its way included, which the client sees as a reset.
 */
export function closeGracefully(server: Server, instance: FastifyInstance, end: (socket: Socket) => void): void {
  let closing = false;
  const inFlight = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const count = inFlight.get(socket);
      if (count === undefined) return;
      inFlight.set(socket, count - 1);
      // An answer begun before the close (a stream, a long poll) leaves no keep-alive behind it.
      if (closing && count === 1) end(socket);
    });
  });
  instance.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Before every other hook: a stopping process answers nothing else, and reads no token or row.
  instance.addHook('onRequest', (_request, reply, done) => {
    if (!closing) {
      done();
      return;
    }
    void reply
      .status(503)
      .headers({ 'retry-after': String(CLOSING_RETRY_AFTER_SEC), connection: 'close' })
      .type(PROBLEM_CONTENT_TYPE)
      .send(problemBody(503, 'This process is shutting down; retry, another replica may answer'));
  });
  // Answers finishing while the process stops close their connection, so no keep-alive outlives it.
  instance.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  server.closeIdleConnections = () => {
    for (const [socket, count] of inFlight) {
      if (count > 0) continue;
      setTimeout(() => {
        if ((inFlight.get(socket) ?? 0) === 0) end(socket);
      }, IDLE_GRACE_MS).unref();
    }
  };
}
