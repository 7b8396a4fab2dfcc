import { afterEach, describe, expect, it } from '@jest/globals';
import { ISSUER_DISCOVERY_WARNING } from '#platform';
import { startApi, type TestApi } from '../support/api.js';
import { writeIssuerKeyFile } from '../support/tokens.js';
import { testKeyRingFile } from '../support/key-ring.js';

/**
 * DESIGN 10: the RFC 8414 metadata's `issuer` is exactly `JWT_ISSUER`; standard clients discover the issuer
 * only when that is the URL the metadata is served under (`PUBLIC_BASE_URL`), so a production start where
 * the two differ logs a warning saying so.
 */
const keys = writeIssuerKeyFile();
let api: TestApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function productionIssuer(issuer: string, publicBaseUrl: string): Promise<TestApi> {
  api = await startApi({
    NODE_ENV: 'production',
    CONFIG_KEYRING_FILE: testKeyRingFile(),
    JWT_JWKS_FILE: '',
    TOKEN_ISSUER_KEY_FILE: keys.file,
    JWT_ISSUER: issuer,
    PUBLIC_BASE_URL: publicBaseUrl,
  });
  return api;
}

const metadataOf = async (started: TestApi) => {
  const res = await started.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
  expect(res.statusCode).toBe(200);
  return res.json<{ issuer: string; token_endpoint: string; jwks_uri: string }>();
};

const discoveryWarnings = (started: TestApi) => started.logs.lines.filter((l) => l.msg === ISSUER_DISCOVERY_WARNING);

describe('the issuer metadata in production', () => {
  it('names exactly JWT_ISSUER, and a start where it differs from PUBLIC_BASE_URL warns once', async () => {
    const started = await productionIssuer('https://auth.example/realm/', 'https://bindery.example');
    expect(await metadataOf(started)).toMatchObject({
      issuer: 'https://auth.example/realm/',
      token_endpoint: 'https://bindery.example/oauth2/token',
      jwks_uri: 'https://bindery.example/.well-known/jwks.json',
    });
    const warnings = discoveryWarnings(started);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      jwtIssuer: 'https://auth.example/realm/',
      publicBaseUrl: 'https://bindery.example',
    });
    expect(ISSUER_DISCOVERY_WARNING).toContain('standard OAuth clients cannot discover this issuer');
  });

  it('names exactly JWT_ISSUER when it is PUBLIC_BASE_URL, without a warning', async () => {
    const started = await productionIssuer('https://bindery.example', 'https://bindery.example');
    expect((await metadataOf(started)).issuer).toBe('https://bindery.example');
    expect(discoveryWarnings(started)).toEqual([]);
  });
});
