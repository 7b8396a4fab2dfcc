import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, jest } from '@jest/globals';
import { KeySourceUnavailableError, RemoteJwksKeyStore, StaticKeyStore, UnknownKeyError } from './keys.js';

const ec = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = (kid: string) => ({ ...ec().publicKey.export({ format: 'jwk' }), kid });
const file = (name: string, text: string | Buffer) => {
  const path = join(mkdtempSync(join(tmpdir(), 'keys-')), name);
  writeFileSync(path, text);
  return path;
};

describe('StaticKeyStore', () => {
  it('loads a JWKS file and picks keys by kid; an unknown kid is refused', async () => {
    const store = await StaticKeyStore.fromFile(file('jwks.json', JSON.stringify({ keys: [jwk('a'), jwk('b')] })));
    expect(store.keyFor('a').asymmetricKeyType).toBe('ec');
    expect(store.keyFor('a')).toBe(store.keyFor('a'));
    expect(() => store.keyFor('c')).toThrow(UnknownKeyError);
    expect(() => store.keyFor(undefined)).toThrow(UnknownKeyError);
  });

  it('loads a PEM public key that matches any kid', async () => {
    const pem = ec().publicKey.export({ type: 'spki', format: 'pem' });
    const store = await StaticKeyStore.fromFile(file('key.pem', pem));
    expect(store.keyFor('whatever')).toBe(store.keyFor(undefined));
  });

  it('refuses private keys and symmetric-only sets', async () => {
    const pem = ec().privateKey.export({ type: 'pkcs8', format: 'pem' });
    await expect(StaticKeyStore.fromFile(file('key.pem', pem))).rejects.toThrow('private key');
    expect(() => StaticKeyStore.fromJwks({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'h' }] })).toThrow(
      'no usable public key',
    );
  });
});

describe('RemoteJwksKeyStore', () => {
  /** A JWKS endpoint whose key set the test can change, counting fetches. */
  function issuer(minRefetchIntervalMs: number) {
    const state = { keys: [jwk('one')], fetches: 0 };
    const fakeFetch = (() => {
      state.fetches += 1;
      return Promise.resolve(new Response(JSON.stringify({ keys: state.keys })));
    }) as typeof fetch;
    const store = new RemoteJwksKeyStore({ uri: 'https://issuer.test/jwks', fetch: fakeFetch, minRefetchIntervalMs });
    return { state, store };
  }

  it('fetches once, caches, and refetches an unknown kid at most once per interval', async () => {
    const { state, store } = issuer(60_000);
    await store.keyFor('one');
    await store.keyFor('one');
    expect(state.fetches).toBe(1);
    state.keys = [jwk('one'), jwk('two')];
    await expect(Promise.resolve().then(() => store.keyFor('two'))).rejects.toThrow(UnknownKeyError);
    expect(state.fetches).toBe(1);
  });

  it('refetches for a new kid once the interval has passed, not before', async () => {
    // The store's clock and timers on the fake clock: the interval passes exactly when the test says.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const { state, store } = issuer(1000);
    try {
      await store.keyFor('one');
      state.keys = [jwk('two')];
      jest.advanceTimersByTime(999);
      await expect(Promise.resolve().then(() => store.keyFor('two'))).rejects.toThrow(UnknownKeyError);
      jest.advanceTimersByTime(1);
      expect((await store.keyFor('two')).asymmetricKeyType).toBe('ec');
      expect(state.fetches).toBe(2);
    } finally {
      store.close();
      jest.useRealTimers();
    }
  });

  it('re-reads the JWKS every refreshMs: a dropped key is no longer held, an unchanged one keeps its object', async () => {
    const stays = jwk('stays');
    const state = { keys: [jwk('gone'), stays] as object[], fetches: 0, fail: false };
    const fakeFetch = (() => {
      state.fetches += 1;
      if (state.fail) return Promise.reject(new Error('ECONNREFUSED'));
      return Promise.resolve(new Response(JSON.stringify({ keys: state.keys })));
    }) as typeof fetch;
    const store = new RemoteJwksKeyStore({ uri: 'https://issuer.test/jwks', fetch: fakeFetch, refreshMs: 30 });
    const afterTwoMoreFetches = async () => {
      const seen = state.fetches;
      while (state.fetches < seen + 2) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      const gone = await store.keyFor('gone');
      const kept = await store.keyFor('stays');
      expect(store.holds(gone) && store.holds(kept)).toBe(true);
      // Nobody asks for a key meanwhile: the timer alone re-reads it.
      state.keys = [stays];
      await afterTwoMoreFetches();
      expect(store.holds(gone)).toBe(false);
      expect(store.holds(kept)).toBe(true);
      // An unreachable JWKS withdraws nothing: it cannot tell that a key left.
      state.fail = true;
      await afterTwoMoreFetches();
      expect(store.holds(kept)).toBe(true);
      // A key replaced under the same kid is a new key: the old object is no longer held.
      state.fail = false;
      state.keys = [jwk('stays')];
      await afterTwoMoreFetches();
      expect(store.holds(kept)).toBe(false);
    } finally {
      store.close();
    }
  });

  it('with stale keys and the JWKS down, requests do not ask it again each time (once per interval)', async () => {
    const state = { fetches: 0, fail: false };
    const fakeFetch = (() => {
      state.fetches += 1;
      if (state.fail) return Promise.reject(new Error('ECONNREFUSED'));
      return Promise.resolve(new Response(JSON.stringify({ keys: [jwk('one')] })));
    }) as typeof fetch;
    // The store's clock and refresh timer on the fake clock; I/O and the event loop's turns run as ever.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const store = new RemoteJwksKeyStore({
      uri: 'https://issuer.test/jwks',
      fetch: fakeFetch,
      refreshMs: 20,
      minRefetchIntervalMs: 60_000,
    });
    try {
      await store.keyFor('one');
      state.fail = true;
      // Stale: older than two refresh periods, every re-read since failing (each ran to its end).
      await jest.advanceTimersByTimeAsync(100);
      const before = state.fetches;
      for (let i = 0; i < 50; i += 1) {
        expect((await store.keyFor('one')).asymmetricKeyType).toBe('ec');
      }
      // One turn for anything the requests deferred (a fetch each would show here); the timer cannot tick.
      await new Promise((r) => setImmediate(r));
      expect(state.fetches - before).toBe(0);
    } finally {
      store.close();
      jest.useRealTimers();
    }
  });

  it('StaticKeyStore holds exactly its own keys', () => {
    const store = StaticKeyStore.fromJwks({ keys: [jwk('a')] });
    expect(store.holds(store.keyFor('a'))).toBe(true);
    expect(store.holds(ec().publicKey)).toBe(false);
  });

  it('a request during the first fetch waits for it instead of failing as unavailable', async () => {
    const { state, store } = issuer(60_000);
    try {
      const keys = await Promise.all([store.keyFor('one'), store.keyFor('one')]);
      expect(keys[0]).toBe(keys[1]);
      expect(state.fetches).toBe(1);
    } finally {
      store.close();
    }
  });

  it('asks fetch not to follow redirects, and a 3xx is a failed fetch (DESIGN 6.1)', async () => {
    const asked: RequestInit[] = [];
    const redirecting = ((_uri: string, init: RequestInit) => {
      asked.push(init);
      return Promise.resolve(new Response(null, { status: 302, headers: { location: 'http://elsewhere.test/' } }));
    }) as typeof fetch;
    const store = new RemoteJwksKeyStore({ uri: 'https://issuer.test/jwks', fetch: redirecting });
    try {
      await expect(Promise.resolve().then(() => store.keyFor('one'))).rejects.toThrow(
        'JWKS fetch failed: redirect refused (HTTP 302)',
      );
      expect(asked.map((init) => init.redirect)).toEqual(['manual']);
    } finally {
      store.close();
    }
  });

  it('reports an unreachable JWKS as unavailable, not as a bad token', async () => {
    const failing = (() => Promise.reject(new Error('ECONNREFUSED'))) as typeof fetch;
    const store = new RemoteJwksKeyStore({ uri: 'https://issuer.test/jwks', fetch: failing });
    await expect(Promise.resolve().then(() => store.keyFor('one'))).rejects.toThrow(KeySourceUnavailableError);
  });
});
