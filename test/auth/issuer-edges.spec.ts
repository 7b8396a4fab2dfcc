import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token, writeIssuerKeyFile } from '../support/tokens.js';

/**
 * Edges of the built-in issuer an audit found open (DESIGN 10, 16): operator clients holding only an admin
 * capability, a concurrent burst of guesses for one client id, a JSON body shaped like a parsed form, and a
 * malformed Basic credential sent beside form credentials.
 */

let api: TestApi;
let admin: string;

beforeAll(async () => {
  api = await startApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
  admin = await callers.admin();
}, 60_000);
afterAll(() => api?.close());

interface Client {
  readonly clientId: string;
  readonly clientSecret: string;
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function tokenRequest(payload: string, headers: Record<string, string>, remoteAddress = '10.77.0.1') {
  return api.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload,
    remoteAddress,
  });
}

async function runtimeClient(): Promise<Client> {
  const res = await call(api, 'POST', '/oauth2/clients', {
    token: admin,
    body: { host: 'h-audit', sid: unique('svc'), envs: [], scopes: ['portal.r'] },
  });
  expect(res.statusCode).toBe(201);
  return res.json<Client>();
}

describe('operator clients holding an admin capability (DESIGN 16)', () => {
  // DESIGN 16: "An operator client (section 10) is one without host and sid whose scopes include
  // portal.admin or an admin capability (tags:admin, config:admin, clients:admin, registry:read)."
  it.each(['clients:admin', 'config:admin', 'tags:admin', 'registry:read'])(
    'a global admin creates one with only %s and no host/sid, and it gets a token',
    async (scope) => {
      const res = await call(api, 'POST', '/oauth2/clients', {
        token: admin,
        body: { clientId: unique('op'), envs: [], scopes: [scope] },
      });
      expect(res.statusCode).toBe(201);
      const client = res.json<Client>();
      const issued = await tokenRequest('grant_type=client_credentials', {
        authorization: basic(client.clientId, client.clientSecret),
      });
      expect(issued.statusCode).toBe(200);
    },
  );
});

describe('lockout of one (client id, address) pair (DESIGN 10)', () => {
  // "Ten failed authentications of one client id from one source address within a minute answer 429
  // ... a check that is refused costs no hash computation."
  it('a concurrent burst of wrong secrets for one client id gets at most ten secret checks', async () => {
    const client = await runtimeClient();
    const { SecretChecker } = await import('../../apps/api/token-issuer/client-secrets.js');
    const checks = jest.spyOn(api.app.get(SecretChecker), 'matchesAny');
    try {
      const burst = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          tokenRequest(
            'grant_type=client_credentials',
            { authorization: basic(client.clientId, `wrong-${i}`) },
            '10.77.1.1',
          ),
        ),
      );
      const statuses = burst.map((r) => r.statusCode);
      const failures = statuses.filter((s) => s === 401).length;
      expect(failures).toBe(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(15);
      expect(checks.mock.calls).toHaveLength(10);
    } finally {
      checks.mockRestore();
    }
  });
});

describe('the token request format (DESIGN 10, RFC 6749 4.4)', () => {
  it('a JSON body is not a token request, whatever its shape', async () => {
    const client = await runtimeClient();
    const res = await api.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/json', authorization: basic(client.clientId, client.clientSecret) },
      payload: JSON.stringify({ grant_type: ['client_credentials'] }),
      remoteAddress: '10.77.2.1',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a malformed Basic credential next to client_secret_post is not silently ignored', async () => {
    const client = await runtimeClient();
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }).toString();
    // base64url alphabet instead of base64: the Basic regex does not match, so the header is dropped.
    const res = await tokenRequest(form, { authorization: 'Basic a-b_c' }, '10.77.3.1');
    expect([400, 401]).toContain(res.statusCode);
  });
});

describe('a host-bound admin rotating a client stronger than itself (DESIGN 16)', () => {
  // "A host-bound admin gives a client only scopes it holds itself": a secret it chose is the client's tokens.
  it('is 403 naming the scopes it lacks, and the client keeps its secret; a client within its scopes rotates', async () => {
    const host = unique('h-rot');
    const stronger = await call(api, 'POST', '/oauth2/clients', {
      token: admin,
      body: { host, sid: unique('svc'), envs: [], scopes: ['config:admin', 'portal.r'] },
    });
    expect(stronger.statusCode).toBe(201);
    const client = stronger.json<Client>();
    const hostAdmin = await token({ sub: 'host-clients-admin', host, scope: 'clients:admin tags:read' });

    const refused = await call(api, 'POST', `/oauth2/clients/${client.clientId}/secret`, {
      token: hostAdmin,
      body: {},
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json<{ detail: string }>().detail).toContain('config:admin');
    expect(refused.body).not.toContain('clientSecret');
    const stillWorks = await tokenRequest('grant_type=client_credentials', {
      authorization: basic(client.clientId, client.clientSecret),
    });
    expect(stillWorks.statusCode).toBe(200);

    const within = await call(api, 'POST', '/oauth2/clients', {
      token: hostAdmin,
      body: { host, sid: unique('svc'), envs: [], scopes: ['tags:read'] },
    });
    expect(within.statusCode).toBe(201);
    const rotated = await call(api, 'POST', `/oauth2/clients/${within.json<Client>().clientId}/secret`, {
      token: hostAdmin,
      body: {},
    });
    expect(rotated.statusCode).toBe(200);
    // Another host's client stays a 404, not a 403 that would tell it exists.
    const elsewhere = await call(api, 'POST', `/oauth2/clients/${client.clientId}/secret`, {
      token: await token({ sub: 'other-admin', host: unique('h-other'), scope: 'clients:admin' }),
      body: {},
    });
    expect(elsewhere.statusCode).toBe(404);
  });
});
