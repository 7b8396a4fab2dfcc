import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decideBinding } from '#token-binding';
import { claimsOf, configRuleRefuses, materialize, registerRuleRefuses, shapes } from '../support/binding-space.js';
import { assertProperty } from '../support/property.js';

/** The pure decision against the contract's model, over far more cases than the process tests can afford. */
const RUNS = 20_000;

const claimSpace = { sid: shapes({ json: true }), host: shapes({ json: true }), env: shapes({ json: true }) };
const claimsFrom = (input: { sid: unknown; host: unknown; env: unknown }) =>
  claimsOf({
    sid: materialize(input.sid as never, 'svc'),
    host: materialize(input.host as never, 'h1'),
    env: materialize(input.env as never, 'prod'),
  });

describe('decideBinding (property, pure)', () => {
  it('config: allows exactly what DESIGN 6.2 allows, with its reason', async () => {
    await assertProperty(
      'decideBinding config',
      fc.property(
        fc.record({
          ...claimSpace,
          qHost: shapes({ json: true }),
          qSid: shapes({ json: true }),
          qEnv: shapes({ json: true }),
        }),
        (input) => {
          const claims = claimsFrom(input);
          const request = {
            host: materialize(input.qHost, 'h1'),
            serviceId: materialize(input.qSid, 'svc'),
            envTag: materialize(input.qEnv, 'prod'),
          };
          const decision = decideBinding(claims, { kind: 'config', ...request });
          const refused = configRuleRefuses(claims, request);
          expect(decision.allowed ? undefined : decision.reason).toBe(refused);
        },
      ),
      RUNS,
    );
  });

  it('register: allows exactly what DESIGN 6.3 allows, with its reason', async () => {
    await assertProperty(
      'decideBinding register',
      fc.property(fc.record({ ...claimSpace, pSid: shapes({ json: true }), pEnv: shapes({ json: true }) }), (input) => {
        const claims = claimsFrom(input);
        const params = { serviceId: materialize(input.pSid, 'svc'), envTag: materialize(input.pEnv, 'prod') };
        const decision = decideBinding(claims, { kind: 'register', controllerHostId: 'h1', ...params });
        expect(decision.allowed ? undefined : decision.reason).toBe(registerRuleRefuses(claims, params, 'h1'));
      }),
      RUNS,
    );
  });
});
