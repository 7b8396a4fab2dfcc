import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it, jest } from '@jest/globals';
import { SignJWT } from 'jose';
import { RemoteJwksKeyStore, UnknownKeyError, type KeyStore } from './keys.js';
import { InvalidTokenError, TokenVerifier } from './token-verifier.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const policy = { issuer: 'iss', audience: 'bindery', algorithms: ['ES256'], clockToleranceSec: 0 };

/** A key store that counts how often a signature had to be checked; `trusted` false withdraws its key. */
function countingStore(): KeyStore & { lookups: number; trusted: boolean } {
  return {
    lookups: 0,
    trusted: true,
    keyFor(): KeyObject {
      this.lookups += 1;
      if (!this.trusted) throw new UnknownKeyError('withdrawn');
      return publicKey;
    },
    holds(key: KeyObject): boolean {
      return this.trusted && key === publicKey;
    },
  };
}

function sign(expiresAt: number, key: KeyObject = privateKey, kid?: string): Promise<string> {
  return new SignJWT({ sub: 'a', scope: 'portal.r' })
    .setProtectedHeader({ alg: 'ES256', ...(kid === undefined ? {} : { kid }) })
    .setIssuer('iss')
    .setAudience('bindery')
    .setExpirationTime(expiresAt)
    .sign(key);
}

describe('TokenVerifier cache of verified tokens', () => {
  it('checks a repeated token once, and a token differing only in its signature is still refused', async () => {
    const keys = countingStore();
    const verifier = new TokenVerifier(keys, policy);
    const token = await sign(Math.floor(Date.now() / 1000) + 3600);
    const first = await verifier.verify(token);
    expect(await verifier.verify(token)).toBe(first);
    expect(keys.lookups).toBe(1);
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${(await sign(Math.floor(Date.now() / 1000) + 3600, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)).split('.')[2]}`;
    await expect(verifier.verify(forged)).rejects.toThrow(InvalidTokenError);
  });

  it('stops accepting a remembered token when it expires', async () => {
    // The clock alone is faked (the verifier and jose read Date): the token's last millisecond, then its expiry.
    jest.useFakeTimers({
      doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'setInterval', 'setTimeout'],
    });
    try {
      const keys = countingStore();
      const verifier = new TokenVerifier(keys, policy);
      const expiresAt = Math.floor(Date.now() / 1000) + 60;
      const token = await sign(expiresAt);
      const principal = await verifier.verify(token);
      jest.setSystemTime(expiresAt * 1000 - 1);
      expect(await verifier.verify(token)).toBe(principal);
      expect(keys.lookups).toBe(1);
      jest.setSystemTime(expiresAt * 1000);
      await expect(verifier.verify(token)).rejects.toThrow(InvalidTokenError);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('TokenVerifier cache and withdrawn keys (DESIGN 6.1)', () => {
  const hour = () => Math.floor(Date.now() / 1000) + 3600;

  it('refuses a remembered token once the store no longer holds its key, on both entry points', async () => {
    const keys = countingStore();
    const verifier = new TokenVerifier(keys, policy);
    const viaVerify = await sign(hour());
    const viaAccept = await sign(hour() + 1);
    await verifier.verify(viaVerify);
    // The HTTP path: passport-jwt verified with the key `keyFor` gave, then `accept` remembers it.
    verifier.accept(viaAccept, { exp: hour(), sub: 'a' }, await verifier.keyFor(viaAccept));
    expect(verifier.remembered(viaVerify)).toBeDefined();
    expect(verifier.remembered(viaAccept)).toBeDefined();
    keys.trusted = false;
    expect(verifier.remembered(viaVerify)).toBeUndefined();
    expect(verifier.remembered(viaAccept)).toBeUndefined();
    await expect(verifier.verify(viaVerify)).rejects.toThrow(InvalidTokenError);
    // Trusted again, the entry is gone: the token is verified afresh, not taken from the cache.
    keys.trusted = true;
    const before = keys.lookups;
    await verifier.verify(viaVerify);
    expect(keys.lookups).toBe(before + 1);
  });

  it('does not remember a token whose key left the store between verification and accept', async () => {
    const keys = countingStore();
    const verifier = new TokenVerifier(keys, policy);
    const token = await sign(hour());
    const key = await verifier.keyFor(token);
    keys.trusted = false;
    expect(verifier.accept(token, { exp: hour(), sub: 'a' }, key).subject).toBe('a');
    keys.trusted = true;
    expect(verifier.remembered(token)).toBeUndefined();
  });

  it('with a JWKS URL: a key dropped from the JWKS is refused after the next re-read, remembered or not', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = (key: KeyObject, kid: string) => ({ ...key.export({ format: 'jwk' }), kid });
    let served = [jwk(publicKey, 'gone'), jwk(other.publicKey, 'stays')];
    let fetches = 0;
    const fakeFetch = (() => {
      fetches += 1;
      return Promise.resolve(new Response(JSON.stringify({ keys: served })));
    }) as typeof fetch;
    const store = new RemoteJwksKeyStore({ uri: 'https://issuer.test/jwks', fetch: fakeFetch, refreshMs: 50 });
    try {
      const verifier = new TokenVerifier(store, policy);
      const dropped = await sign(hour(), privateKey, 'gone');
      const kept = await sign(hour(), other.privateKey, 'stays');
      await verifier.verify(dropped);
      await verifier.verify(kept);
      expect(verifier.remembered(dropped)).toBeDefined();
      served = [jwk(other.publicKey, 'stays')];
      // Two fetches after the change: the first has been applied once the second starts.
      const seen = fetches;
      while (fetches < seen + 2) await new Promise((r) => setTimeout(r, 10));
      expect(verifier.remembered(dropped)).toBeUndefined();
      await expect(verifier.verify(dropped)).rejects.toThrow(InvalidTokenError);
      // The key that stayed keeps its object across re-reads: its remembered token still counts.
      expect(verifier.remembered(kept)).toBeDefined();
    } finally {
      store.close();
    }
  });
});
