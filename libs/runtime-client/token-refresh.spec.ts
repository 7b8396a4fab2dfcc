import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { RuntimeClient } from './runtime-client.js';

const NOW_SEC = 1_900_000_000;
const identity = { host: 'h1', serviceId: 'petstore', envTag: 'dev' };

/** An unsigned token of the runtime profile: the client decodes its claims, the controller would verify it. */
function tokenFor(lifetimeSec: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { host: 'h1', sid: 'petstore', env: 'dev', iat: NOW_SEC, exp: NOW_SEC + lifetimeSec };
  return `${part({ alg: 'ES256' })}.${part(claims)}.c2ln`;
}

describe('the runtime client renews its token at the renewal point (DESIGN 11)', () => {
  afterEach(() => {
    jest.clearAllTimers();
    jest.useRealTimers();
  });

  it('a token of 60 days is renewed after 48, not again and again from the start', async () => {
    jest.useFakeTimers({ now: NOW_SEC * 1000 });
    const lifetimeSec = 60 * 86_400;
    let fetched = 0;
    const fetchStub = (): Promise<Response> => {
      fetched += 1;
      return Promise.resolve(Response.json({ access_token: tokenFor(lifetimeSec), token_type: 'Bearer' }));
    };
    const client = await RuntimeClient.create({
      ...identity,
      tokenEndpoint: 'http://issuer.invalid/oauth2/token',
      clientId: 'petstore-dev',
      clientSecret: 'secret',
      apiUrl: 'http://api.invalid',
      controllerUrl: 'ws://controller.invalid',
      fetch: fetchStub,
    });
    expect(fetched).toBe(1);
    // What a registration does once its socket is up; the renewal itself needs no socket to be counted.
    (client as unknown as { scheduleRefresh(): void }).scheduleRefresh();
    await jest.advanceTimersByTimeAsync(30 * 86_400_000);
    expect(fetched).toBe(1);
    await jest.advanceTimersByTimeAsync(18 * 86_400_000);
    expect(fetched).toBe(2);
  });
});
