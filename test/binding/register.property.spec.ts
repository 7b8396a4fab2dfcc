import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  claimsOf,
  CONTROL,
  expectedEnv,
  materialize,
  registerRuleRefuses,
  shapes,
  Outcomes,
  PROPERTY_RUNS,
  SENTENCES,
} from '../support/binding-space.js';
import { assertProperty } from '../support/property.js';
import {
  RegistryTable,
  RpcClient,
  startController,
  statementsDuring,
  type TestController,
} from '../support/controller.js';
import { token } from '../support/tokens.js';

let controller: TestController;
let table: RegistryTable;
let cases = 0;
const outcomes = new Outcomes();
const SENTENCE = SENTENCES.register;

beforeAll(async () => {
  controller = await startController({ LOG_LEVEL: 'silent' });
  table = new RegistryTable();
});

afterAll(async () => {
  await controller?.close();
  await table?.end();
});

const space = fc.record({
  sid: shapes({ json: true }),
  host: shapes({ json: true }),
  env: shapes({ json: true }),
  serviceId: shapes({ json: true }),
  envTag: shapes({ json: true }),
  /** The upgrade's Authorization header, or the upstream protocol's `params.jwt`. */
  via: fc.constantFrom('header' as const, 'params' as const),
});

/**
 * A registration validation accepts once the binding allowed it (DESIGN 8 params); the token's env stands in
 * for an omitted envTag and must be a valid envTag as well.
 */
function validRegistration(serviceId: unknown, env: string | null): boolean {
  const sid = typeof serviceId === 'string' ? serviceId.trim() : undefined;
  const envOk = env === null || (env.length <= 255 && !CONTROL.test(env));
  return sid !== undefined && sid.length >= 1 && sid.length <= 255 && !CONTROL.test(sid) && envOk;
}

describe('TokenBindingGuard on service/register (property, real controller over WebSocket)', () => {
  it(`registers exactly what the contract's rule allows, over ${PROPERTY_RUNS} generated tokens and params`, async () => {
    await assertProperty(
      'service/register binding',
      fc.asyncProperty(space, async (input) => {
        cases += 1;
        // Each case its own service and environment, so no case can reuse another's registration.
        const serviceId = `svc${cases}p`;
        const env = `env${cases}e`;
        const claims = claimsOf({
          sub: 'runtime',
          sid: materialize(input.sid, serviceId),
          host: materialize(input.host, controller.hostId),
          env: materialize(input.env, env),
        });
        const params = claimsOf({
          serviceId: materialize(input.serviceId, serviceId),
          envTag: materialize(input.envTag, env),
          address: '10.1.2.3',
          port: 8443,
        });
        const jwt = await token(claims);
        const refused = registerRuleRefuses(claims, params, controller.hostId);
        const before = await table.query('select count(*)::int as n from runtime_instance where host_id = $1', [
          controller.hostId,
        ]);

        const client = await RpcClient.connect(controller.wsUrl, input.via === 'header' ? { token: jwt } : {});
        const { result: response, all } = await statementsDuring(() =>
          client.call('service/register', input.via === 'params' ? { ...params, jwt } : params),
        );

        outcomes.saw(refused);
        if (refused !== undefined) {
          expect(response.error).toEqual({ code: -32003, message: SENTENCE[refused], data: { status: 403 } });
          expect(await client.waitClosed()).toEqual({ code: 1008, reason: SENTENCE[refused] });
          // Decided before the database: not one statement, and no row.
          expect(all).toEqual([]);
          const after = await table.query('select count(*)::int as n from runtime_instance where host_id = $1', [
            controller.hostId,
          ]);
          expect(after.rows[0].n).toBe(before.rows[0].n);
          return;
        }
        if (!validRegistration(params.serviceId, expectedEnv(claims, params.envTag))) {
          expect(response.error?.code).toBe(-32602);
          expect(all).toEqual([]);
        } else {
          expect(response.result).toEqual({ runtimeInstanceId: expect.any(String), status: 'registered' });
          const rows = await table.rows('runtime_instance_id = $1', [response.result?.runtimeInstanceId]);
          expect(rows).toHaveLength(1);
          expect(rows[0]).toMatchObject({
            host_id: controller.hostId,
            service_id: String(params.serviceId).trim(),
            env_tag: expectedEnv(claims, params.envTag),
          });
        }
        await client.close();
      }),
      PROPERTY_RUNS,
    );
    expect(outcomes.missing()).toEqual([]);
    await controller.quiesce();
  }, 600_000);
});
