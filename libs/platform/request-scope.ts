import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/** The app (its root logger) serving a request, and the request while it is unanswered. */
export interface RequestScope {
  readonly root: Logger;
  request: FastifyRequest | undefined;
}

// One store for the process: Nest's `Logger` is process-wide, and a line finds its request (and app) here.
const scopes = new AsyncLocalStorage<RequestScope>();
const open = new WeakMap<FastifyRequest, RequestScope>();

/** The scope of the request whose work is running now, if any. */
export function currentScope(): RequestScope | undefined {
  return scopes.getStore();
}

/** Runs `next` (and all it starts) within `request`'s scope, so its lines carry `req`. */
export function enterRequest(root: Logger, request: FastifyRequest, next: () => void): void {
  const scope: RequestScope = { root, request };
  open.set(request, scope);
  scopes.run(scope, next);
}

/**
 * Ends `request`'s scope once it is answered: a promise or timer it left behind (a connection opened for it,
 * a retry) logs without its id from then on, rather than with the id of a request long gone.
 */
export function leaveRequest(request: FastifyRequest): void {
  const scope = open.get(request);
  if (scope !== undefined) scope.request = undefined;
  open.delete(request);
}

/**
 * Runs `work` outside any request's scope: for background work started by whichever request came first (a
 * connection and its listeners, reconnect timers), whose lines belong to no request.
 */
export function outsideRequest<T>(work: () => T): T {
  return scopes.exit(work);
}
