import { describe, expect, it } from '@jest/globals';
import { checkRuntimeClaims, decodeToken, RuntimeTokenError } from './claims.js';
import { backoffDelay, isPlainFileName } from './runtime-client.js';

const identity = { host: 'h1', serviceId: 'petstore', envTag: 'dev' };

describe('checkRuntimeClaims (DESIGN 11)', () => {
  const cases: [
    string,
    Record<string, unknown>,
    typeof identity | { host: string; serviceId: string },
    string | null,
  ][] = [
    ['all three match', { host: 'h1', sid: 'petstore', env: 'dev' }, identity, null],
    ['surrounding blanks are trimmed', { host: ' h1 ', sid: 'petstore ', env: ' dev' }, identity, null],
    ['no env needed without envTag', { host: 'h1', sid: 'petstore' }, { host: 'h1', serviceId: 'petstore' }, null],
    ['host missing', { sid: 'petstore', env: 'dev' }, identity, 'host'],
    ['host blank', { host: '  ', sid: 'petstore', env: 'dev' }, identity, 'host'],
    ['host not a string', { host: 1, sid: 'petstore', env: 'dev' }, identity, 'host'],
    ['host differs', { host: 'h2', sid: 'petstore', env: 'dev' }, identity, 'host'],
    ['host differs in case', { host: 'H1', sid: 'petstore', env: 'dev' }, identity, 'host'],
    ['sid missing (sub is not sid)', { host: 'h1', sub: 'petstore', env: 'dev' }, identity, 'sid'],
    ['sid differs', { host: 'h1', sid: 'orders', env: 'dev' }, identity, 'sid'],
    ['env missing with envTag', { host: 'h1', sid: 'petstore' }, identity, 'env'],
    ['env differs', { host: 'h1', sid: 'petstore', env: 'prod' }, identity, 'env'],
    ['env array is not a string', { host: 'h1', sid: 'petstore', env: ['dev'] }, identity, 'env'],
  ];
  it.each(cases)('%s', (_name, claims, who, claim) => {
    if (claim === null) {
      expect(() => checkRuntimeClaims(claims, who)).not.toThrow();
      return;
    }
    let error: unknown;
    try {
      checkRuntimeClaims(claims, who);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RuntimeTokenError);
    expect((error as RuntimeTokenError).claim).toBe(claim);
    expect((error as Error).message).toContain(claim);
  });
});

describe('decodeToken', () => {
  const jwt = (payload: unknown): string => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
  it('reads the payload and exp', () => {
    expect(decodeToken(jwt({ exp: 10, sid: 's' }))).toEqual({ claims: { exp: 10, sid: 's' }, exp: 10 });
  });
  it.each([
    ['not a jwt', 'abc'],
    ['array payload', jwt([1])],
    ['no exp', jwt({ sid: 's' })],
  ])('refuses %s', (_n, token) => {
    expect(() => decodeToken(token)).toThrow(RuntimeTokenError);
  });
});

describe('file names and backoff', () => {
  it.each([
    ['app.yml', true],
    ['server.keystore', true],
    ['../etc/passwd', false],
    ['a/b', false],
    ['a\\b', false],
    ['..', false],
    ['nul\u0000', false],
    ['', false],
  ])('%j plain: %s', (name, plain) => expect(isPlainFileName(name)).toBe(plain));

  it('grows exponentially with jitter and is capped at 30 s', () => {
    expect(backoffDelay(0, 30_000, () => 0)).toBe(250);
    expect(backoffDelay(3, 30_000, () => 1)).toBe(4000);
    expect(backoffDelay(20, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(20, 30_000, () => 0)).toBe(15_000);
  });
});
