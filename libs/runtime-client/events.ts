/** What the client was doing when an `error` event happened. */
export type RuntimeClientActivity = 'reconnect' | 'token renewal' | 'subscribe' | 'connection' | 'config re-read';

export type RuntimeClientEvent =
  | {
      readonly type: 'registered';
      readonly runtimeInstanceId: string;
      /** Set when this registration follows a lost connection: attempts made and time without one. */
      readonly reconnect?: { readonly attempts: number; readonly downMs: number };
    }
  | { readonly type: 'disconnected'; readonly code: number; readonly reason: string }
  | { readonly type: 'reconnecting'; readonly attempt: number; readonly delayMs: number }
  | { readonly type: 'refreshed'; readonly exp: number }
  | { readonly type: 'error'; readonly error: Error; readonly during: RuntimeClientActivity };

/** An error's own words plus what lies under them: Node's fetch says only "fetch failed" without its cause. */
export function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    const text = current.message !== '' ? current.message : current.name;
    if (text !== '' && !parts.includes(text)) parts.push(text);
    current = current.cause;
  }
  // "fetch failed: connect ECONNREFUSED ..." says the same as the cause alone.
  if (parts.length > 1 && parts[0] === 'fetch failed') parts.shift();
  return parts.length === 0 ? error.name : parts.join(': ');
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

const FAILED: Record<RuntimeClientActivity, string> = {
  reconnect: 'reconnect failed',
  'token renewal': 'token renewal failed',
  subscribe: 'subscribing again failed',
  connection: 'connection error',
  'config re-read': 'reading the changed config failed',
};

/** One line for a person reading a runtime's log: what happened, and for an error its cause. */
export function describeRuntimeEvent(event: RuntimeClientEvent): string {
  switch (event.type) {
    case 'registered':
      if (event.reconnect === undefined) return `registered as ${event.runtimeInstanceId}`;
      return (
        `reconnected after ${event.reconnect.attempts} ${event.reconnect.attempts === 1 ? 'attempt' : 'attempts'} ` +
        `(${seconds(event.reconnect.downMs)} without a connection); registered as ${event.runtimeInstanceId}`
      );
    case 'disconnected':
      return `disconnected from the controller (code ${event.code}${event.reason === '' ? '' : `: ${event.reason}`})`;
    case 'reconnecting':
      return `reconnecting in ${seconds(event.delayMs)} (attempt ${event.attempt})`;
    case 'refreshed':
      return `token refreshed on the socket; valid until ${new Date(event.exp * 1000).toISOString()}`;
    case 'error':
      return `${FAILED[event.during]}: ${causeOf(event.error)}`;
  }
}

/** The parts of a config change its one-line description needs (`ConfigChange` of the runtime client). */
export interface DescribedConfigChange {
  readonly values: Readonly<Record<string, unknown>>;
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  readonly previous: Readonly<Record<string, unknown>>;
  readonly cause: { readonly type: 'pushed'; readonly version: number | null } | { readonly type: 'reconnected' };
}

const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** One line: `config changed (version 7): server.httpPort 8443 → 9443, a.b added (1), c.d removed`. */
export function describeConfigChange(change: DescribedConfigChange): string {
  const { cause } = change;
  const heading =
    cause.type === 'reconnected'
      ? 'config changed while disconnected'
      : cause.version === null
        ? 'config changed'
        : `config changed (version ${cause.version})`;
  const parts = [
    ...change.changed.map((key) => `${key} ${shown(change.previous[key])} → ${shown(change.values[key])}`),
    ...change.added.map((key) => `${key} added (${shown(change.values[key])})`),
    ...change.removed.map((key) => `${key} removed`),
  ];
  return `${heading}: ${parts.join(', ')}`;
}
