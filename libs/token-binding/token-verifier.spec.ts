import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import type { KeyStore } from './keys.js';
import { InvalidTokenError, TokenVerifier } from './token-verifier.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const policy = { issuer: 'iss', audience: 'bindery', algorithms: ['ES256'], clockToleranceSec: 0 };

/** A key store that counts how often a signature had to be checked. */
function countingStore(): KeyStore & { lookups: number } {
  return {
    lookups: 0,
    keyFor(): KeyObject {
      this.lookups += 1;
      return publicKey;
    },
  };
}

function sign(expiresAt: number, key: KeyObject = privateKey): Promise<string> {
  return new SignJWT({ sub: 'a', scope: 'portal.r' })
    .setProtectedHeader({ alg: 'ES256' })
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
    const verifier = new TokenVerifier(countingStore(), policy);
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const token = await sign(expiresAt);
    await verifier.verify(token);
    await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 - Date.now() + 50));
    await expect(verifier.verify(token)).rejects.toThrow(InvalidTokenError);
  });
});
