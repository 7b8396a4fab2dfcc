import { createSecretKey } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { JWTPayload } from 'jose';
import { KeySourceUnavailableError, principalOf, type Principal, type TokenVerifier } from '#token-binding';
import { JsonRpcError } from '../../jsonrpc/jsonrpc.js';
import { RegistryConnection } from './connection.js';
import { SessionRefresh } from './session-refresh.js';

const EXP = 2_000_000_000;
/** Stands in for the key that verified a token (the refresh keeps it with the socket's new token). */
const KEY = createSecretKey(Buffer.alloc(32));
const SOCKET_CLAIMS = { sid: 'svc', host: 'h1', env: 'prod', exp: EXP };

/** Verifies exactly the tokens it was given (small test: no keys, no clock). */
class FakeVerifier {
  readonly calls: string[] = [];
  constructor(private readonly tokens: ReadonlyMap<string, Principal | Error>) {}

  verifyKeyed(jwt: string): Promise<{ principal: Principal; key: typeof KEY }> {
    this.calls.push(jwt);
    const known = this.tokens.get(jwt) ?? new Error('unknown token');
    return known instanceof Error ? Promise.reject(known) : Promise.resolve({ principal: known, key: KEY });
  }
}

function setup(held: JWTPayload | undefined, fresh: JWTPayload | Error) {
  const verifier = new FakeVerifier(new Map([['fresh', fresh instanceof Error ? fresh : principalOf(fresh)]]));
  const sut = new SessionRefresh(verifier as unknown as TokenVerifier);
  const connection = new RegistryConnection(
    held === undefined ? undefined : { token: 'held', principal: principalOf(held), key: KEY },
  );
  return { sut, connection, verifier };
}

const refusal = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error('the refresh was accepted');
    },
    (error: unknown) => {
      if (!(error instanceof JsonRpcError)) throw error;
      return { code: error.code, message: error.message };
    },
  );

describe('SessionRefresh', () => {
  it('replaces the socket token and principal with a verified one of the same sid, host and env', async () => {
    const { sut, connection } = setup(SOCKET_CLAIMS, { ...SOCKET_CLAIMS, exp: EXP + 60 });
    await expect(sut.refresh(connection, { jwt: 'fresh' })).resolves.toEqual({ status: 'refreshed', exp: EXP + 60 });
    expect(connection.token).toBe('fresh');
    expect(connection.principal?.claims.exp).toBe(EXP + 60);
  });

  // Claims are compared as the binding rule reads them (DESIGN 6.2): trimmed, blank or non-string is absent.
  it.each([
    ['surrounding whitespace', { sid: ' svc ' }, { sid: 'svc' }],
    ['a blank env and none', { env: '  ' }, { env: undefined }],
    ['no env on either', { env: undefined }, { env: undefined }],
    ['a non-string env and none', { env: 7 }, { env: undefined }],
  ])('accepts a token bound the same way: %s', async (_, held, fresh) => {
    const { sut, connection } = setup({ ...SOCKET_CLAIMS, ...held }, { ...SOCKET_CLAIMS, ...fresh });
    await expect(sut.refresh(connection, { jwt: 'fresh' })).resolves.toMatchObject({ status: 'refreshed' });
    expect(connection.token).toBe('fresh');
  });

  it.each([
    ['another sid', {}, { sid: 'other' }, 'sid'],
    ['another host', {}, { host: 'h2' }, 'host'],
    ['another env', {}, { env: 'dev' }, 'env'],
    ['an env where the socket has none', { env: undefined }, {}, 'env'],
    ['no env where the socket has one', {}, { env: undefined }, 'env'],
    ['no sid where the socket has one', {}, { sid: ' ' }, 'sid'],
    ['another case', {}, { host: 'H1' }, 'host'],
  ] as const)('refuses a token with %s (-32003) and keeps the socket token', async (_, held, fresh, claim) => {
    const { sut, connection } = setup({ ...SOCKET_CLAIMS, ...held }, { ...SOCKET_CLAIMS, ...fresh });
    expect(await refusal(sut.refresh(connection, { jwt: 'fresh' }))).toEqual({
      code: -32003,
      message: `Refresh token ${claim} does not match the socket's token`,
    });
    expect(connection.token).toBe('held');
  });

  it('refuses a token that fails verification with -32001', async () => {
    const { sut, connection } = setup(SOCKET_CLAIMS, new Error('bad signature'));
    expect(await refusal(sut.refresh(connection, { jwt: 'fresh' }))).toEqual({ code: -32001, message: 'Unauthorized' });
    expect(connection.token).toBe('held');
  });

  it('answers 503 when the token keys cannot be read', async () => {
    const { sut, connection } = setup(SOCKET_CLAIMS, new KeySourceUnavailableError('JWKS down'));
    await expect(sut.refresh(connection, { jwt: 'fresh' })).rejects.toMatchObject({ data: { status: 503 } });
  });

  it.each([
    ['a socket without a token', undefined, { jwt: 'fresh' }],
    ['params without jwt', SOCKET_CLAIMS, {}],
    ['a jwt that is not a string', SOCKET_CLAIMS, { jwt: 7 }],
    ['no params', SOCKET_CLAIMS, undefined],
  ])('refuses %s with -32001 before verifying anything', async (_, held, params) => {
    const { sut, connection, verifier } = setup(held, SOCKET_CLAIMS);
    expect(await refusal(sut.refresh(connection, params))).toEqual({ code: -32001, message: 'Unauthorized' });
    expect(verifier.calls).toEqual([]);
  });
});
