import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi, unique, type TestApi } from '../support/api.js';
import {
  bearer,
  ENDPOINTS,
  expectNoSql,
  expectProblem,
  issuedTokens,
  putFiles,
  putProperties,
  send,
  signed,
  type Query,
} from './support.js';

/** ENFORCE_SID_HOST_MATCH=false (DESIGN 6.4): mismatches are logged with "enforcement disabled" and allowed. */

const HOST = unique('ue-host');
const SID = unique('ue-svc');
const ENV = 'prod';
const QUERY: Query = { host: HOST, serviceId: SID, envTag: ENV };

describe('ENFORCE_SID_HOST_MATCH=false', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi({ ENFORCE_SID_HOST_MATCH: 'false' });
    await putProperties(api, QUERY, { 'ue.value': 'served' });
    await putFiles(api, QUERY, 'cert', { 'ue.pem': 'cert' });
    await putFiles(api, QUERY, 'file', { 'ue.txt': 'file' });
  });
  afterAll(() => api.close());

  const expected = {
    configs: { 'ue.value': 'served' },
    certs: { 'ue.pem': Buffer.from('cert').toString('base64') },
    files: { 'ue.txt': Buffer.from('file').toString('base64') },
  };

  it('logs a start-up warning', () => {
    const startup = api.logs.lines.filter(
      (l) => l.level === 40 && l.req === undefined && String(l.msg).includes('enforcement disabled'),
    );
    expect(startup).toHaveLength(1);
    expect(String(startup[0].msg)).toContain('ENFORCE_SID_HOST_MATCH=false');
  });

  const mismatches: [string, Record<string, unknown>, string][] = [
    ['host', { host: 'another-host', sid: SID, env: ENV }, 'host'],
    ['host missing', { sid: SID, env: ENV }, 'host'],
    ['sid', { host: HOST, sid: 'another-service', env: ENV }, 'sid'],
    ['sid missing (sub equal to the service)', { host: HOST, sub: SID, env: ENV }, 'sid'],
    ['env', { host: HOST, sid: SID, env: 'dev' }, 'env'],
  ];

  describe.each(ENDPOINTS)('GET /config-server/%s', (endpoint) => {
    it.each(mismatches)('a %s mismatch is allowed and warned about', async (_, claims, reason) => {
      const requestId = unique('ue-req');
      const sent = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: QUERY,
        authorization: bearer(await signed({ scope: 'portal.r', ...claims })),
        headers: { 'x-request-id': requestId },
      });
      expect(sent.res.statusCode).toBe(200);
      expect(sent.res.json()).toEqual(expected[endpoint]);
      const warnings = api.logs.lines.filter(
        (l) => (l.req as { id?: string } | undefined)?.id === requestId && l.level === 40,
      );
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0].msg)).toContain('enforcement disabled');
      expect(warnings[0]).toMatchObject({
        endpoint: `/config-server/${endpoint}`,
        requestedHost: HOST,
        requestedServiceId: SID,
        envTag: ENV,
        reason,
      });
    });

    it('a matching token is served without a warning', async () => {
      const requestId = unique('ue-req');
      const sent = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: QUERY,
        authorization: bearer(await signed({ scope: 'portal.r', host: HOST, sid: SID, env: ENV })),
        headers: { 'x-request-id': requestId },
      });
      expect(sent.res.statusCode).toBe(200);
      const warnings = api.logs.lines.filter(
        (l) => (l.req as { id?: string } | undefined)?.id === requestId && l.level === 40,
      );
      expect(warnings).toEqual([]);
    });

    it('signature, expiry and scope are still enforced, before any SQL', async () => {
      const none = await send(api, 'GET', `/config-server/${endpoint}`, { query: QUERY });
      expectProblem(none, 401);
      expectNoSql(none);
      const expired = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: QUERY,
        authorization: bearer(await signed({ scope: 'portal.r', host: HOST, sid: SID, env: ENV }, { expiresIn: -600 })),
      });
      expectProblem(expired, 401);
      expectNoSql(expired);
      const noScope = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: QUERY,
        authorization: bearer(await signed({ scope: 'portal.x', host: HOST, sid: SID, env: ENV })),
      });
      expectProblem(noScope, 403);
      expectNoSql(noScope);
    });
  });

  it('no log line contains a token', () => {
    const all = api.logs.raw.join('\n');
    for (const jwt of issuedTokens) expect(all).not.toContain(jwt.split('.')[2]);
  });
});
