import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.js';

/** How long an idle connection may still deliver a request once the process is stopping (answered 503). */
const IDLE_GRACE_MS = 1000;
/** Seconds a client is asked to wait before retrying, here or (sooner) on another replica. */
const CLOSING_RETRY_AFTER_SEC = 1;

/**
 * SIGTERM without a lost or unexplained answer (DESIGN 15, rolling upgrades): once the app starts closing,
 * every new request is answered 503 problem+json with `Retry-After` and `Connection: close`, answers in
 * flight close their connection, and a connection with no request in flight gets IDLE_GRACE_MS to deliver
 * one before it is ended. Node's own `close()` destroys idle connections at once, a request on its way
 * included, which the client sees as a reset. Nothing here adds a Fastify hook: until the close begins, a
 * request costs one counter (bench auth).
 */
export function closeGracefully(server: Server, instance: FastifyInstance, end: (socket: Socket) => void): void {
  let closing = false;
  const inFlight = new Map<Socket, number>();
  const answering = new Set<ServerResponse>();
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  // Registered after the app's own listener (Fastify's router), so it runs second and stays when that goes.
  const routers = server.listeners('request') as RequestListener[];
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    answering.add(response);
    response.once('close', () => {
      answering.delete(response);
      const count = inFlight.get(socket);
      if (count === undefined) return;
      inFlight.set(socket, count - 1);
      // An answer begun before the close (a stream, a long poll) leaves no keep-alive behind it.
      if (closing && count === 1) end(socket);
    });
  });
  instance.addHook('preClose', (done) => {
    closing = true;
    // Answers not yet begun tell their client the connection ends with them.
    for (const response of answering) if (!response.headersSent) response.setHeader('connection', 'close');
    // A stopping process routes nothing else, and reads no token or row.
    for (const router of routers) server.removeListener('request', router);
    server.on('request', refuse);
    done();
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

function refuse(_request: IncomingMessage, response: ServerResponse): void {
  const body = problemBody(503, 'This process is shutting down; retry, another replica may answer');
  response.writeHead(503, {
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': Buffer.byteLength(body),
    'retry-after': String(CLOSING_RETRY_AFTER_SEC),
    connection: 'close',
  });
  response.end(body);
}
