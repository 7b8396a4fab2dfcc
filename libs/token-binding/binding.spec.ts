import { describe, expect, it } from '@jest/globals';
import {
  BINDING_MESSAGES,
  BindingEnforcer,
  decideBinding,
  type BindingDecision,
  type BindingReason,
  type BindingRequest,
} from './binding.js';

type Claims = Record<string, unknown>;

const HOST = 'h1';
const SID = 'petstore';
const ENV = 'prod';
const CONTROLLER = 'ctl-host';

const ALLOWED: BindingDecision = { allowed: true };
const denied = (reason: BindingReason): BindingDecision => ({
  allowed: false,
  reason,
  message: {
    claims: BINDING_MESSAGES.claims,
    host: 'Token host does not match requested host',
    sid: 'Token sid does not match requested serviceId',
    env: 'Token env does not match requested envTag',
  }[reason],
});
const deniedRegisterHost: BindingDecision = {
  allowed: false,
  reason: 'host',
  message: 'Token host does not match controller hostId',
};

const config = (
  host: string | undefined,
  serviceId: string | undefined,
  envTag: string | undefined,
): BindingRequest => ({ kind: 'config', host, serviceId, envTag });
const register = (
  controllerHostId: string,
  serviceId: string | undefined,
  envTag: string | undefined,
): BindingRequest => ({ kind: 'register', controllerHostId, serviceId, envTag });

/** Claim values that count as missing (DESIGN 6.2: "a claim that is not a string counts as missing"). */
const MISSING_VALUES: readonly [string, unknown][] = [
  ['absent', undefined],
  ['empty', ''],
  ['spaces only', '   '],
  ['tab and newline only', '\t\n'],
  ['a number', 1],
  ['zero', 0],
  ['a boolean', true],
  ['null', null],
  ['an array holding the right value', ['RIGHT']],
  ['an object holding the right value', { value: 'RIGHT' }],
];

/** Token values compared with the requested `RIGHT` value: whitespace is trimmed, case is not folded. */
const COMPARED_VALUES: readonly [string, (right: string) => string, boolean][] = [
  ['equal', (r) => r, true],
  ['padded on the left', (r) => `  ${r}`, true],
  ['padded on the right', (r) => `${r}  `, true],
  ['padded with tabs and newlines', (r) => `\t${r}\n`, true],
  ['upper-cased', (r) => r.toUpperCase(), false],
  ['first letter upper-cased', (r) => r[0].toUpperCase() + r.slice(1), false],
  ['different', () => 'other', false],
  ['a prefix of it', (r) => r.slice(0, -1), false],
  ['longer', (r) => `${r}x`, false],
  ['with inner whitespace', (r) => `${r[0]} ${r.slice(1)}`, false],
];

function withClaim(base: Claims, name: string, value: unknown): Claims {
  const claims = { ...base };
  if (value === undefined) delete claims[name];
  else claims[name] = value;
  return claims;
}

const substitute = (value: unknown, right: string): unknown =>
  Array.isArray(value) ? [right] : typeof value === 'object' && value !== null ? { value: right } : value;

describe('decideBinding: configuration requests (DESIGN 6.2)', () => {
  const full: Claims = { sub: 'svc-client', scope: 'portal.r', host: HOST, sid: SID, env: ENV };
  const request = config(HOST, SID, ENV);

  it('allows a token whose host, sid and env equal the request', () => {
    expect(decideBinding(full, request)).toEqual(ALLOWED);
  });

  const claimCases: readonly { claim: 'host' | 'sid' | 'env'; right: string; reason: BindingReason }[] = [
    { claim: 'host', right: HOST, reason: 'host' },
    { claim: 'sid', right: SID, reason: 'sid' },
    { claim: 'env', right: ENV, reason: 'env' },
  ];

  describe.each(claimCases)('token $claim', ({ claim, right, reason }) => {
    it.each(MISSING_VALUES)('%s: rejected', (_, value) => {
      expect(decideBinding(withClaim(full, claim, substitute(value, right)), request)).toEqual(denied(reason));
    });

    it.each(COMPARED_VALUES)('%s', (_, make, allowed) => {
      const decision = decideBinding(withClaim(full, claim, make(right)), request);
      expect(decision).toEqual(allowed ? ALLOWED : denied(reason));
    });
  });

  const requestCases: readonly {
    param: 'host' | 'serviceId' | 'envTag';
    right: string;
    make: (value: string | undefined) => BindingRequest;
  }[] = [
    { param: 'host', right: HOST, make: (v) => config(v, SID, ENV) },
    { param: 'serviceId', right: SID, make: (v) => config(HOST, v, ENV) },
    { param: 'envTag', right: ENV, make: (v) => config(HOST, SID, v) },
  ];

  describe.each(requestCases)('requested $param', ({ param, right, make }) => {
    it.each(COMPARED_VALUES)('%s to the token claim', (_, transform, allowed) => {
      const reason: BindingReason = param === 'host' ? 'host' : param === 'serviceId' ? 'sid' : 'env';
      expect(decideBinding(full, make(transform(right)))).toEqual(allowed ? ALLOWED : denied(reason));
    });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', '  '],
  ])('a requested host that is %s is rejected: rule 1 applies to every request', (_, host) => {
    expect(decideBinding(full, config(host, SID, ENV))).toEqual(denied('host'));
    expect(decideBinding(withClaim(full, 'host', '  '), config(host, SID, ENV))).toEqual(denied('host'));
    expect(decideBinding(withClaim(full, 'host', undefined), config(host, SID, ENV))).toEqual(denied('host'));
  });

  describe('product-level requests (no serviceId) skip the sid rule', () => {
    it.each([
      ['absent', undefined],
      ['empty', ''],
      ['blank', ' \t '],
    ])('serviceId %s: a token without sid is allowed', (_, serviceId) => {
      expect(decideBinding(withClaim(full, 'sid', undefined), config(HOST, serviceId, ENV))).toEqual(ALLOWED);
    });

    it('a token bound to some service may read product-level configuration of its host', () => {
      expect(decideBinding(withClaim(full, 'sid', 'another-service'), config(HOST, undefined, ENV))).toEqual(ALLOWED);
    });

    it('the host and env rules still apply', () => {
      expect(decideBinding(withClaim(full, 'host', 'h2'), config(HOST, undefined, ENV))).toEqual(denied('host'));
      expect(decideBinding(withClaim(full, 'env', 'dev'), config(HOST, undefined, ENV))).toEqual(denied('env'));
    });
  });

  describe('envTag omitted skips the env rule', () => {
    it.each([
      ['absent', undefined],
      ['empty', ''],
      ['blank', '   '],
    ])('envTag %s, token with env: allowed', (_, envTag) => {
      expect(decideBinding(full, config(HOST, SID, envTag))).toEqual(ALLOWED);
    });

    it.each([
      ['absent', undefined],
      ['empty', ''],
    ])('envTag %s, token without env: allowed', (_, envTag) => {
      expect(decideBinding(withClaim(full, 'env', undefined), config(HOST, SID, envTag))).toEqual(ALLOWED);
    });

    it('envTag omitted on a product-level request with a token carrying neither sid nor env: allowed', () => {
      expect(decideBinding({ host: HOST }, config(HOST, undefined, undefined))).toEqual(ALLOWED);
    });
  });

  describe('rule order: host, then sid, then env', () => {
    it('all three wrong: host', () => {
      expect(decideBinding({ host: 'x', sid: 'y', env: 'z' }, request)).toEqual(denied('host'));
    });
    it('sid and env wrong: sid', () => {
      expect(decideBinding({ host: HOST, sid: 'y', env: 'z' }, request)).toEqual(denied('sid'));
    });
    it('host and env wrong: host', () => {
      expect(decideBinding({ host: 'x', sid: SID, env: 'z' }, request)).toEqual(denied('host'));
    });
    it('only env wrong: env', () => {
      expect(decideBinding({ host: HOST, sid: SID, env: 'z' }, request)).toEqual(denied('env'));
    });
    it('an empty token: host', () => {
      expect(decideBinding({}, request)).toEqual(denied('host'));
    });
  });

  describe('sub never stands in for sid or host', () => {
    it('sub equal to the serviceId but no sid: rejected', () => {
      expect(decideBinding({ sub: SID, host: HOST, env: ENV }, request)).toEqual(denied('sid'));
    });
    it('sub equal to the host but no host claim: rejected', () => {
      expect(decideBinding({ sub: HOST, sid: SID, env: ENV }, request)).toEqual(denied('host'));
    });
    it('client_id and other look-alike claims are not read', () => {
      const lookAlikes = { client_id: SID, cid: SID, serviceId: SID, hostId: HOST, envTag: ENV, environment: ENV };
      expect(decideBinding(lookAlikes, request)).toEqual(denied('host'));
      expect(decideBinding({ ...lookAlikes, host: HOST }, request)).toEqual(denied('sid'));
      expect(decideBinding({ ...lookAlikes, host: HOST, sid: SID }, request)).toEqual(denied('env'));
    });
  });

  it('no claims at all (a wiring fault) is denied, never allowed', () => {
    expect(decideBinding(undefined, request)).toEqual(denied('claims'));
    expect(decideBinding(null as unknown as Claims, request)).toEqual(denied('claims'));
    expect(decideBinding('host' as unknown as Claims, request)).toEqual(denied('claims'));
    expect(decideBinding(undefined, config(HOST, undefined, undefined))).toEqual(denied('claims'));
  });
});

describe('decideBinding: service/register (DESIGN 6.3)', () => {
  const full: Claims = { sub: 'svc-client', host: CONTROLLER, sid: SID, env: ENV };
  const request = register(CONTROLLER, SID, ENV);

  it('allows a token bound to the service, the controller host and the env', () => {
    expect(decideBinding(full, request)).toEqual(ALLOWED);
  });

  const claimCases: readonly { claim: 'host' | 'sid' | 'env'; right: string; expected: BindingDecision }[] = [
    { claim: 'sid', right: SID, expected: denied('sid') },
    { claim: 'host', right: CONTROLLER, expected: deniedRegisterHost },
    { claim: 'env', right: ENV, expected: denied('env') },
  ];

  describe.each(claimCases)('token $claim', ({ claim, right, expected }) => {
    it.each(MISSING_VALUES)('%s: rejected', (_, value) => {
      expect(decideBinding(withClaim(full, claim, substitute(value, right)), request)).toEqual(expected);
    });

    it.each(COMPARED_VALUES)('%s', (_, make, allowed) => {
      expect(decideBinding(withClaim(full, claim, make(right)), request)).toEqual(allowed ? ALLOWED : expected);
    });
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', '  '],
  ])('a serviceId that is %s is rejected: registration always names a service', (_, serviceId) => {
    expect(decideBinding(full, register(CONTROLLER, serviceId, ENV))).toEqual(denied('sid'));
    expect(decideBinding(withClaim(full, 'sid', undefined), register(CONTROLLER, serviceId, ENV))).toEqual(
      denied('sid'),
    );
  });

  it('a padded serviceId and controller host id still match', () => {
    expect(decideBinding(full, register(` ${CONTROLLER} `, ` ${SID}\t`, ` ${ENV} `))).toEqual(ALLOWED);
  });

  it('a blank controller host id never matches', () => {
    expect(decideBinding(full, register('  ', SID, ENV))).toEqual(deniedRegisterHost);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', ' '],
  ])('envTag %s skips the env rule, with or without a token env', (_, envTag) => {
    expect(decideBinding(full, register(CONTROLLER, SID, envTag))).toEqual(ALLOWED);
    expect(decideBinding(withClaim(full, 'env', undefined), register(CONTROLLER, SID, envTag))).toEqual(ALLOWED);
  });

  describe('rule order: sid, then host, then env', () => {
    it('all three wrong: sid', () => {
      expect(decideBinding({ host: 'x', sid: 'y', env: 'z' }, request)).toEqual(denied('sid'));
    });
    it('host and env wrong: host', () => {
      expect(decideBinding({ host: 'x', sid: SID, env: 'z' }, request)).toEqual(deniedRegisterHost);
    });
    it('sid and env wrong: sid', () => {
      expect(decideBinding({ host: CONTROLLER, sid: 'y', env: 'z' }, request)).toEqual(denied('sid'));
    });
    it('only env wrong: env', () => {
      expect(decideBinding({ host: CONTROLLER, sid: SID, env: 'z' }, request)).toEqual(denied('env'));
    });
  });

  it('a token with a valid sub but no sid is rejected', () => {
    expect(decideBinding({ sub: SID, host: CONTROLLER, env: ENV }, request)).toEqual(denied('sid'));
  });

  it('sub equal to the controller host but no host claim is rejected', () => {
    expect(decideBinding({ sub: CONTROLLER, sid: SID, env: ENV }, request)).toEqual(deniedRegisterHost);
  });

  it('no claims is denied', () => {
    expect(decideBinding(undefined, request)).toEqual(denied('claims'));
  });
});

describe('decideBinding: discovery/* (host only)', () => {
  const lookup = (controllerHostId: string): BindingRequest => ({ kind: 'lookup', controllerHostId });
  const full: Claims = { host: CONTROLLER, sid: 'another-service', env: 'other-env' };

  it('allows a token of the controller host whatever its sid and env', () => {
    expect(decideBinding(full, lookup(CONTROLLER))).toEqual(ALLOWED);
    expect(decideBinding({ host: CONTROLLER }, lookup(CONTROLLER))).toEqual(ALLOWED);
  });

  it.each(MISSING_VALUES)('token host %s: rejected', (_, value) => {
    expect(decideBinding(withClaim(full, 'host', substitute(value, CONTROLLER)), lookup(CONTROLLER))).toEqual(
      deniedRegisterHost,
    );
  });

  it.each(COMPARED_VALUES)('token host %s', (_, make, allowed) => {
    expect(decideBinding(withClaim(full, 'host', make(CONTROLLER)), lookup(CONTROLLER))).toEqual(
      allowed ? ALLOWED : deniedRegisterHost,
    );
  });

  it('sub equal to the controller host never stands in for host; a blank controller host never matches', () => {
    expect(decideBinding({ sub: CONTROLLER }, lookup(CONTROLLER))).toEqual(deniedRegisterHost);
    expect(decideBinding(full, lookup('  '))).toEqual(deniedRegisterHost);
  });

  it('no claims is denied', () => {
    expect(decideBinding(undefined, lookup(CONTROLLER))).toEqual(denied('claims'));
  });
});

describe('BINDING_MESSAGES', () => {
  it('are the exact sentences of DESIGN 6.2, 6.3 and 8', () => {
    expect(BINDING_MESSAGES).toEqual({
      claims: 'No verified token claims',
      configHost: 'Token host does not match requested host',
      controllerHost: 'Token host does not match controller hostId',
      sid: 'Token sid does not match requested serviceId',
      env: 'Token env does not match requested envTag',
    });
  });
});

interface Line {
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

function recorder(): { lines: Line[]; warn: (fields: object, message: string) => void } {
  const lines: Line[] = [];
  return { lines, warn: (fields, message) => lines.push({ fields: { ...fields }, message }) };
}

const LOG_FIELDS = [
  'endpoint',
  'envTag',
  'reason',
  'requestedHost',
  'requestedServiceId',
  'tokenEnv',
  'tokenHost',
  'tokenSid',
].sort();

describe('BindingEnforcer', () => {
  const secretClaims = {
    sub: 'alice-subject',
    scope: 'portal.r secret-scope',
    client_id: 'client-secret-id',
    jti: 'jti-123',
    email: 'alice@example.com',
  };
  const claims = { ...secretClaims, host: 'h-token', sid: 'sid-token', env: 'env-token' };

  it('allows a matching request without logging anything', () => {
    const log = recorder();
    const rejections: string[] = [];
    const enforcer = new BindingEnforcer(true, log, (reason) => rejections.push(reason));
    const decision = enforcer.check('/config-server/configs', claims, config('h-token', 'sid-token', 'env-token'));
    expect(decision).toEqual(ALLOWED);
    expect(log.lines).toEqual([]);
    expect(rejections).toEqual([]);
  });

  it('rejects a mismatch with one warning line of exactly the contract fields', () => {
    const log = recorder();
    const rejections: [string, string][] = [];
    const enforcer = new BindingEnforcer(true, log, (reason, endpoint) => rejections.push([reason, endpoint]));
    const decision = enforcer.check('/config-server/configs', claims, config('h-asked', 'sid-asked', 'env-asked'));
    expect(decision).toEqual(denied('host'));
    expect(log.lines).toHaveLength(1);
    const [line] = log.lines;
    expect(Object.keys(line.fields).sort()).toEqual(LOG_FIELDS);
    expect(line.fields).toEqual({
      endpoint: '/config-server/configs',
      requestedServiceId: 'sid-asked',
      tokenSid: 'sid-token',
      requestedHost: 'h-asked',
      tokenHost: 'h-token',
      envTag: 'env-asked',
      tokenEnv: 'env-token',
      reason: 'host',
    });
    expect(line.message).toContain('Token host does not match requested host');
    expect(rejections).toEqual([['host', '/config-server/configs']]);
  });

  it('never logs the other claims', () => {
    const log = recorder();
    new BindingEnforcer(true, log).check('/config-server/certs', claims, config('h-token', 'other', undefined));
    const text = JSON.stringify(log.lines);
    for (const value of Object.values(secretClaims)) expect(text).not.toContain(value);
    expect(text).not.toContain('secret-scope');
  });

  it('logs absent values and non-string claims as null', () => {
    const log = recorder();
    new BindingEnforcer(true, log).check(
      '/config-server/files',
      { host: 7, sid: ['x'] },
      config(undefined, undefined, undefined),
    );
    expect(log.lines[0].fields).toEqual({
      endpoint: '/config-server/files',
      requestedServiceId: null,
      tokenSid: null,
      requestedHost: null,
      tokenHost: null,
      envTag: null,
      tokenEnv: null,
      reason: 'host',
    });
  });

  it('logs the controller host id as requestedHost for registrations', () => {
    const log = recorder();
    const decision = new BindingEnforcer(true, log).check(
      'service/register',
      claims,
      register('ctl', 'sid-token', undefined),
    );
    expect(decision).toEqual(deniedRegisterHost);
    expect(log.lines[0].fields).toMatchObject({
      endpoint: 'service/register',
      requestedHost: 'ctl',
      tokenHost: 'h-token',
    });
  });

  it('with enforcement disabled allows a mismatch and still warns, with the words "enforcement disabled"', () => {
    const log = recorder();
    const rejections: string[] = [];
    const enforcer = new BindingEnforcer(false, log, (reason) => rejections.push(reason));
    for (const request of [config('h-x', 'sid-token', 'env-token'), config('h-token', 'sid-x', 'env-token')]) {
      expect(enforcer.check('/config-server/configs', claims, request)).toEqual(ALLOWED);
    }
    expect(log.lines).toHaveLength(2);
    for (const line of log.lines) {
      expect(line.message).toContain('enforcement disabled');
      expect(Object.keys(line.fields).sort()).toEqual(LOG_FIELDS);
    }
    expect(log.lines.map((l) => l.fields.reason)).toEqual(['host', 'sid']);
    expect(rejections).toEqual([]);
  });

  it('with enforcement disabled still denies when there are no verified claims', () => {
    const log = recorder();
    const decision = new BindingEnforcer(false, log).check('/config-server/configs', undefined, config('h', 's', 'e'));
    expect(decision).toEqual(denied('claims'));
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0].message).not.toContain('enforcement disabled');
  });

  it('with enforcement disabled does not log a matching request', () => {
    const log = recorder();
    new BindingEnforcer(false, log).check('/config-server/configs', claims, config('h-token', 'sid-token', undefined));
    expect(log.lines).toEqual([]);
  });
});
