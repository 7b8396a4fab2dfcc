import { ApiError, ConnectionLost } from './api.js';
import { errorBox, replace } from './dom.js';
import type { Identity } from './session.js';

export type ConnectionState = 'live' | 'reconnecting' | 'idle';

export interface ViewContext {
  readonly identity: Identity;
  /** Aborted when the operator leaves the view: stops its streams and polls. */
  readonly signal: AbortSignal;
  setConnection(state: ConnectionState): void;
  /** The token was refused (expired, revoked): back to sign-in with the api's words. */
  signOut(reason: string): void;
}

export type View = (root: HTMLElement, context: ViewContext) => void;

const RETRY_MS = 2000;

/**
 * Runs `load` until it succeeds, then shows `loaded` as the connection state: a lost connection shows the
 * reconnecting state and retries; a refused token signs out; any other failure is shown in `errors` in the api's words.
 */
export async function loadWithRetry(
  context: ViewContext,
  errors: HTMLElement,
  load: () => Promise<void>,
  loaded: ConnectionState = 'idle',
): Promise<void> {
  while (!context.signal.aborted) {
    try {
      await load();
      replace(errors);
      context.setConnection(loaded);
      return;
    } catch (error) {
      if (context.signal.aborted) return;
      if (error instanceof ConnectionLost) {
        context.setConnection('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      showFailure(context, errors, error);
      return;
    }
  }
}

/** A failed action in words: the api's detail, a lost connection, or a refused token (sign-in again). */
export function showFailure(context: ViewContext, errors: HTMLElement, error: unknown): void {
  if (error instanceof ApiError && error.status === 401) {
    context.signOut(error.detail);
    return;
  }
  const message =
    error instanceof ApiError || error instanceof ConnectionLost
      ? error.message
      : `Something went wrong in the page: ${String(error)}`;
  replace(errors, errorBox(message));
}
