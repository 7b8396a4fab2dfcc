import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  claimsOf,
  configRuleRefuses,
  CONTROL,
  materialize,
  shapes,
  Outcomes,
  PROPERTY_RUNS,
  SENTENCES,
} from '../support/binding-space.js';
import { assertProperty } from '../support/property.js';
import { call, sqlDuring, startApi, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

const LIMITS = { host: 128, serviceId: 128, envTag: 64 } as const;

let api: TestApi;
let cases = 0;
const outcomes = new Outcomes();
const SENTENCE = SENTENCES.config;

beforeAll(async () => {
  api = await startApi({ LOG_LEVEL: 'silent' });
});

afterAll(async () => {
  await api?.close();
});

const space = fc.record({
  // Claims travel in JSON, so they take every shape; query values are text or absent.
  sid: shapes({ json: true }),
  host: shapes({ json: true }),
  env: shapes({ json: true }),
  qHost: shapes({ json: false }),
  qServiceId: shapes({ json: false }),
  qEnvTag: shapes({ json: false }),
  endpoint: fc.constantFrom('configs', 'certs', 'files'),
});

/** C0 controls but tab, line feed and carriage return, and DEL: refused anywhere in a query value (DESIGN 3). */
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * What validation accepts once the binding allowed the read: no control character in the raw value but
 * surrounding tab and line breaks (which are trimmed, as the binding trims), and the trimmed value within limits.
 */
function valid(query: Readonly<Record<string, string | undefined>>): boolean {
  return (Object.keys(LIMITS) as (keyof typeof LIMITS)[]).every((name) => {
    const raw = query[name];
    if (raw === undefined) return true;
    const value = raw.trim();
    return !CONTROL_BUT_LINE_BREAKS.test(raw) && !CONTROL.test(value) && value.length <= LIMITS[name];
  });
}

describe('TokenBindingGuard on the config server (property, real api over HTTP)', () => {
  it(`reads exactly what the contract's rule allows, over ${PROPERTY_RUNS} generated tokens and queries`, async () => {
    await assertProperty(
      'config read binding',
      fc.asyncProperty(space, async (input) => {
        cases += 1;
        const [host, serviceId, env] = [`h${cases}h`, `svc${cases}p`, `env${cases}e`];
        const claims = claimsOf({
          sub: 'runtime',
          scope: 'portal.r',
          host: materialize(input.host, host),
          sid: materialize(input.sid, serviceId),
          env: materialize(input.env, env),
        });
        const query = {
          host: materialize(input.qHost, host) as string | undefined,
          serviceId: materialize(input.qServiceId, serviceId) as string | undefined,
          envTag: materialize(input.qEnvTag, env) as string | undefined,
        };
        const search = new URLSearchParams({ productId: 'prod', productVersion: '1' });
        for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
        const jwt = await token(claims);
        const refused = configRuleRefuses(claims, query);

        const { result: response, queries } = await sqlDuring(() =>
          call(api, 'GET', `/config-server/${input.endpoint}?${search.toString()}`, { token: jwt }),
        );

        outcomes.saw(refused);
        if (refused !== undefined) {
          // The binding is decided before validation and before the database (DESIGN 3's order).
          expect(response.statusCode).toBe(403);
          expect(response.headers['content-type']).toMatch(/^text\/plain/);
          expect(response.body).toBe(SENTENCE[refused]);
          expect(queries).toBe(0);
          return;
        }
        if (!valid(query)) {
          expect(response.statusCode).toBe(400);
          expect(queries).toBe(0);
          return;
        }
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({});
        expect(queries).toBeGreaterThan(0);
      }),
      PROPERTY_RUNS,
    );
    expect(outcomes.missing()).toEqual([]);
  }, 600_000);
});
