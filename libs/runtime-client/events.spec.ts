import { describe, expect, it } from '@jest/globals';
import { RuntimeTokenError } from './claims.js';
import { causeOf, describeRuntimeEvent, type RuntimeClientEvent } from './events.js';
import { TokenSource } from './token-source.js';

const identity = { host: 'dev-host', serviceId: 'petstore', envTag: 'dev' };

const source = (fetchImpl: typeof fetch): TokenSource =>
  new TokenSource({
    tokenEndpoint: 'http://127.0.0.1:1/oauth2/token',
    clientId: 'petstore-dev',
    clientSecret: 'stale',
    identity,
    fetch: fetchImpl,
  });

/** What Node's fetch throws for a refused connection: "fetch failed", the reason only in `cause`. */
const refused = (): Error => new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8080') });

describe('error messages name their cause', () => {
  it('a refused secret: the RFC 6749 error code and the status', async () => {
    const answer = (): Promise<Response> =>
      Promise.resolve(
        new Response(JSON.stringify({ error: 'invalid_client', error_description: 'Client authentication failed' }), {
          status: 401,
          headers: { 'content-type': 'application/json' },
        }),
      );
    const error = await source(answer)
      .token()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeTokenError);
    expect((error as Error).message).toBe('token endpoint refused: invalid_client (401)');
    expect(describeRuntimeEvent({ type: 'error', error: error as Error, during: 'token renewal' })).toBe(
      'token renewal failed: token endpoint refused: invalid_client (401)',
    );
  });

  it('an answer that is not an OAuth error: the status', async () => {
    const error = await source(() => Promise.resolve(new Response('<html>', { status: 502 })))
      .token()
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('token endpoint refused: HTTP 502');
  });

  it('an unreachable endpoint: what lies under "fetch failed"', async () => {
    const error = await source(() => Promise.reject(refused()))
      .token()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeTokenError);
    expect((error as Error).message).toBe('token endpoint unreachable: connect ECONNREFUSED 127.0.0.1:8080');
  });

  it('causeOf joins distinct messages down the cause chain and never answers an empty string', () => {
    expect(causeOf(refused())).toBe('connect ECONNREFUSED 127.0.0.1:8080');
    expect(causeOf(new Error('outer', { cause: new Error('inner') }))).toBe('outer: inner');
    expect(causeOf(new Error('same', { cause: new Error('same') }))).toBe('same');
    expect(causeOf(Object.assign(new Error(''), { name: 'AbortError' }))).toBe('AbortError');
    expect(causeOf('a string')).toBe('a string');
  });
});

describe('describeRuntimeEvent: one line per event', () => {
  const error = new Error('connect ECONNREFUSED 127.0.0.1:8081');
  const cases: [RuntimeClientEvent, string][] = [
    [{ type: 'registered', runtimeInstanceId: 'i-1' }, 'registered as i-1'],
    [
      { type: 'registered', runtimeInstanceId: 'i-1', reconnect: { attempts: 1, downMs: 1234 } },
      'reconnected after 1 attempt (1.2 s without a connection); registered as i-1',
    ],
    [
      { type: 'registered', runtimeInstanceId: 'i-1', reconnect: { attempts: 4, downMs: 61_000 } },
      'reconnected after 4 attempts (61 s without a connection); registered as i-1',
    ],
    [
      { type: 'disconnected', code: 1001, reason: 'server shutting down' },
      'disconnected from the controller (code 1001: server shutting down)',
    ],
    [{ type: 'disconnected', code: 1006, reason: '' }, 'disconnected from the controller (code 1006)'],
    [{ type: 'reconnecting', attempt: 3, delayMs: 2500 }, 'reconnecting in 2.5 s (attempt 3)'],
    [{ type: 'refreshed', exp: 1_800_000_000 }, 'token refreshed on the socket; valid until 2027-01-15T08:00:00.000Z'],
    [{ type: 'error', error, during: 'reconnect' }, 'reconnect failed: connect ECONNREFUSED 127.0.0.1:8081'],
    [{ type: 'error', error, during: 'subscribe' }, 'subscribing again failed: connect ECONNREFUSED 127.0.0.1:8081'],
    [{ type: 'error', error, during: 'connection' }, 'connection error: connect ECONNREFUSED 127.0.0.1:8081'],
  ];
  it.each(cases)('%j', (event, line) => {
    expect(describeRuntimeEvent(event)).toBe(line);
  });
});
