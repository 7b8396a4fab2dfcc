import { describe, expect, it } from '@jest/globals';
import type { JWTPayload } from 'jose';
import { unique } from '../support/api.js';
import {
  instanceIdOf,
  registryForFile,
  RpcClient,
  statementsDuring,
  type UpgradeRefused,
} from '../support/controller.js';
import { rawToken, token, UNTRUSTED } from '../support/tokens.js';

const SID = 'Token sid does not match requested serviceId';
const HOST = 'Token host does not match controller hostId';
const ENV = 'Token env does not match requested envTag';

const registry = registryForFile();
const issued: string[] = [];

async function signed(claims: JWTPayload, options?: Parameters<typeof token>[1]): Promise<string> {
  const jwt = await token(claims, options);
  issued.push(jwt);
  return jwt;
}

interface Attempt {
  /** Claims of the token, given the service id and the controller's host id. */
  readonly claims: (serviceId: string, hostId: string) => JWTPayload;
  /** Extra `service/register` params besides `serviceId` (a function gets the controller's host id). */
  readonly params?: Record<string, unknown> | ((hostId: string) => Record<string, unknown>);
  /** How the token travels: the upgrade's Authorization header (default), `params.jwt`, or not at all. */
  readonly via?: 'header' | 'params' | 'none';
}

/** Connects, sends one `service/register`, and waits until the socket closed (if it does) and the server settled. */
async function register(attempt: Attempt, serviceId: string) {
  const jwt = await signed(attempt.claims(serviceId, registry.controller.hostId));
  const via = attempt.via ?? 'header';
  const client = await RpcClient.connect(registry.controller.wsUrl, via === 'header' ? { token: jwt } : {});
  const response = await client.call('service/register', {
    serviceId,
    address: '10.0.0.7',
    port: 8443,
    protocol: 'https',
    ...(typeof attempt.params === 'function' ? attempt.params(registry.controller.hostId) : attempt.params),
    ...(via === 'params' ? { jwt } : {}),
  });
  return { client, response };
}

async function expectRejected(attempt: Attempt, code: number, message: string, status: number): Promise<void> {
  const serviceId = unique('svc');
  const {
    result,
    all,
    registry: registrySql,
  } = await statementsDuring(async () => {
    const { client, response } = await register(attempt, serviceId);
    const closed = await client.waitClosed();
    await registry.controller.quiesce();
    return { response, closed };
  });
  expect(result.response).toEqual({ jsonrpc: '2.0', id: 1, error: { code, message, data: { status } } });
  expect(result.closed).toEqual({ code: 1008, reason: message });
  // Nothing reached the database: not the registry, not anything else.
  expect(registrySql).toEqual([]);
  expect(all).toEqual([]);
  expect(await registry.table.byService(serviceId)).toEqual([]);
  if (code === -32003) {
    // Found by the service id on either side: some cases send a serviceId that is not a string.
    const line = registry.controller.logs.lines.find(
      (l) => l.requestedServiceId === serviceId || l.tokenSid === serviceId,
    );
    expect(line).toMatchObject({ level: 40, endpoint: 'service/register', requestedHost: registry.controller.hostId });
    expect(String(line?.msg)).toContain(message);
    for (const field of ['tokenSid', 'tokenHost', 'envTag', 'tokenEnv']) expect(line).toHaveProperty(field);
  }
}

async function expectRegistered(attempt: Attempt, envTag: string | null): Promise<void> {
  const serviceId = unique('svc');
  const { client, response } = await register(attempt, serviceId);
  expect(response).toEqual({
    jsonrpc: '2.0',
    id: 1,
    result: { runtimeInstanceId: expect.any(String), status: 'registered' },
  });
  const rows = await registry.table.byService(serviceId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    runtime_instance_id: instanceIdOf(response),
    host_id: registry.controller.hostId,
    env_tag: envTag,
    status: 'connected',
  });
  await client.close();
  await registry.controller.quiesce();
}

const bound =
  (extra: JWTPayload = {}) =>
  (serviceId: string, hostId: string): JWTPayload => ({ sub: 'runtime', sid: serviceId, host: hostId, ...extra });

describe('service/register: the binding matrix (DESIGN 6.3)', () => {
  describe('registered', () => {
    it.each<[string, Attempt, string | null]>([
      ['sid and host match, no envTag', { claims: bound() }, null],
      ['sid, host and env match', { claims: bound({ env: 'prod' }), params: { envTag: 'prod' } }, 'prod'],
      ['envTag omitted: an env-bound token registers under its env', { claims: bound({ env: 'dev' }) }, 'dev'],
      ['blank envTag: the token env too', { claims: bound({ env: ' dev ' }), params: { envTag: ' ' } }, 'dev'],
      ['null envTag: the token env too', { claims: bound({ env: 'dev' }), params: { envTag: null } }, 'dev'],
      ['envTag omitted and no env claim', { claims: bound() }, null],
      ['blank envTag counts as omitted', { claims: bound(), params: { envTag: '   ' } }, null],
      ['claims and params compared after trimming', { claims: (s, h) => ({ sid: ` ${s} `, host: ` ${h}` }) }, null],
      [
        'token in params.jwt (no header)',
        { claims: bound({ env: 'prod' }), params: { envTag: 'prod' }, via: 'params' },
        'prod',
      ],
    ])('%s', async (_name, attempt, envTag) => {
      await expectRegistered(attempt, envTag);
    });
  });

  describe('rejected with -32003, nothing stored, closed 1008', () => {
    it.each<[string, Attempt, string]>([
      ['sid different', { claims: bound({ sid: 'other-service' }) }, SID],
      ['sid missing', { claims: (_s, h) => ({ sub: 'runtime', host: h }) }, SID],
      ['sid blank', { claims: bound({ sid: '   ' }) }, SID],
      ['sid not a string', { claims: bound({ sid: 42 }) }, SID],
      ['sid differs only in case', { claims: (s, h) => ({ sid: s.toUpperCase(), host: h }) }, SID],
      ['sub equals the serviceId but no sid', { claims: (s, h) => ({ sub: s, host: h }) }, SID],
      ['host different from the controller', { claims: bound({ host: 'another-host' }) }, HOST],
      ['host missing', { claims: (s) => ({ sid: s }) }, HOST],
      ['host blank', { claims: bound({ host: ' ' }) }, HOST],
      [
        'a host field in the message is ignored',
        { claims: bound({ host: 'another-host' }), params: (hostId) => ({ host: hostId, hostId }) },
        HOST,
      ],
      ['envTag given, env missing', { claims: bound(), params: { envTag: 'prod' } }, ENV],
      ['envTag given, env different', { claims: bound({ env: 'dev' }), params: { envTag: 'prod' } }, ENV],
      ['envTag given, env blank', { claims: bound({ env: '  ' }), params: { envTag: 'prod' } }, ENV],
      ['mismatch with the token in params.jwt', { claims: bound({ sid: 'other-service' }), via: 'params' }, SID],
      // The bypass a review found: a param the guard could not compare was left to validation (DESIGN 6.3 rule 5).
      ['another sid, envTag empty', { claims: bound({ sid: 'other-service' }), params: { envTag: '' } }, SID],
      ['another sid, envTag blank', { claims: bound({ sid: 'other-service' }), params: { envTag: '   ' } }, SID],
      ['another sid, envTag null', { claims: bound({ sid: 'other-service' }), params: { envTag: null } }, SID],
      ['another host, envTag empty', { claims: bound({ host: 'another-host' }), params: { envTag: '' } }, HOST],
      ['another host, envTag null', { claims: bound({ host: 'another-host' }), params: { envTag: null } }, HOST],
      [
        "a person's token (no sid, no host), envTag empty",
        { claims: () => ({ sub: 'alice', scope: 'portal.r portal.w' }), params: { envTag: '' } },
        SID,
      ],
      [
        "a person's token via params.jwt, envTag null",
        { claims: () => ({ sub: 'alice' }), params: { envTag: null }, via: 'params' },
        SID,
      ],
      ['serviceId not a string', { claims: bound(), params: { serviceId: 42 } }, SID],
      ['serviceId null', { claims: bound(), params: { serviceId: null } }, SID],
      ['serviceId an array of the right value', { claims: bound(), params: { serviceId: ['x'] } }, SID],
      ['envTag not a string', { claims: bound({ env: 'prod' }), params: { envTag: 7 } }, ENV],
      ['envTag an object', { claims: bound({ env: 'prod' }), params: { envTag: { env: 'prod' } } }, ENV],
    ])('%s', async (_name, attempt, sentence) => {
      await expectRejected(attempt, -32003, sentence, 403);
    });
  });

  describe('invalid or missing token in params.jwt: -32001, nothing stored, closed 1008', () => {
    it('no header and no params.jwt', async () => {
      await expectRejected({ claims: bound(), via: 'none' }, -32001, 'Unauthorized', 401);
    });

    it.each<[string, () => Promise<string>]>([
      ['signed by an untrusted key', () => signed({ sid: 'x' }, { key: UNTRUSTED })],
      ['expired', () => signed({ sid: 'x' }, { expiresIn: -3600 })],
      ['another issuer', () => signed({ sid: 'x' }, { issuer: 'https://evil.test' })],
      ['another audience', () => signed({ sid: 'x' }, { audience: 'someone-else' })],
      ['alg none', () => Promise.resolve(rawToken({ alg: 'none' }, { sid: 'x' }, ''))],
      ['not a JWT', () => Promise.resolve('garbage')],
    ])('%s', async (_name, make) => {
      const jwt = await make();
      const serviceId = unique('svc');
      const { result, all } = await statementsDuring(async () => {
        const client = await RpcClient.connect(registry.controller.wsUrl);
        const response = await client.call('service/register', { serviceId, jwt });
        const closed = await client.waitClosed();
        await registry.controller.quiesce();
        return { response, closed };
      });
      expect(result.response).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32001, message: 'Unauthorized', data: { status: 401 } },
      });
      expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
      expect(all).toEqual([]);
      expect(await registry.table.byService(serviceId)).toEqual([]);
    });

    it('a header and a different params.jwt: -32001', async () => {
      const serviceId = unique('svc');
      const header = await signed({ sid: serviceId, host: registry.controller.hostId });
      const other = await signed({ sid: serviceId, host: registry.controller.hostId, jti: 'another' });
      const { result, all } = await statementsDuring(async () => {
        const client = await RpcClient.connect(registry.controller.wsUrl, { token: header });
        const response = await client.call('service/register', { serviceId, jwt: other });
        const closed = await client.waitClosed();
        await registry.controller.quiesce();
        return { response, closed };
      });
      expect(result.response.error).toEqual({ code: -32001, message: 'Unauthorized', data: { status: 401 } });
      expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
      expect(all).toEqual([]);
      expect(await registry.table.byService(serviceId)).toEqual([]);
    });

    it('a header and the same token in params.jwt: registered', async () => {
      const serviceId = unique('svc');
      const jwt = await signed({ sid: serviceId, host: registry.controller.hostId });
      const client = await RpcClient.connect(registry.controller.wsUrl, { token: jwt });
      const response = await client.call('service/register', { serviceId, jwt });
      expect(response.result).toEqual({ runtimeInstanceId: expect.any(String), status: 'registered' });
      await client.close();
      await registry.controller.quiesce();
    });
  });

  describe('only service/register takes params.jwt (DESIGN 8)', () => {
    it.each(['discovery/lookup', 'discovery/subscribe', 'service/deregister', 'discovery/unsubscribe'])(
      '%s with a valid params.jwt on a socket without a verified token: -32001, closed 1008, no SQL',
      async (method) => {
        const jwt = await signed({ sub: 'runtime', sid: 'looker', host: registry.controller.hostId });
        const { result, all } = await statementsDuring(async () => {
          const client = await RpcClient.connect(registry.controller.wsUrl);
          const response = await client.call(method, {
            serviceId: 'looker',
            runtimeInstanceId: 'x',
            subscriptionId: 'x',
            jwt,
          });
          return { response, closed: await client.waitClosed() };
        });
        expect(result.response.error).toEqual({ code: -32001, message: 'Unauthorized', data: { status: 401 } });
        expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
        expect(all).toEqual([]);
      },
    );

    it('after a registration with params.jwt, later calls act with that token and may omit it', async () => {
      const serviceId = unique('svc');
      const jwt = await signed({ sub: 'runtime', sid: serviceId, host: registry.controller.hostId });
      const client = await RpcClient.connect(registry.controller.wsUrl);
      expect((await client.call('service/register', { serviceId, jwt })).result).toMatchObject({
        status: 'registered',
      });
      expect((await client.call('discovery/lookup', { serviceId })).result).toMatchObject({ serviceId });
      await client.close();
      await registry.controller.quiesce();
    });
  });

  // Bad tokens in the upgrade header: the one BAD_TOKENS table, in test/controller/bad-tokens.spec.ts.
  describe('the upgrade Authorization header', () => {
    it('another scheme than Bearer is answered like no header (RFC 6750 3.1): the token must come in params', async () => {
      const client = await RpcClient.connect(registry.controller.wsUrl, {
        headers: { authorization: 'Basic dXNlcjpwYXNz' },
      });
      const answer = await client.call('service/register', { serviceId: 'svc-basic' });
      expect(answer.error).toMatchObject({ code: -32001, data: { status: 401 } });
      expect(await client.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
    });

    it('a malformed Bearer value is refused with 401 invalid_token', async () => {
      const error = await RpcClient.connect(registry.controller.wsUrl, {
        headers: { authorization: 'Bearer a b' },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as UpgradeRefused).status).toBe(401);
      expect((error as UpgradeRefused).headers['www-authenticate']).toBe(
        'Bearer realm="bindery", error="invalid_token"',
      );
    });
  });

  it('no log line ever contains a token', () => {
    expect(issued.length).toBeGreaterThan(10);
    const text = registry.controller.logs.raw.join('\n');
    for (const jwt of issued) expect(text).not.toContain(jwt);
  });
});
