import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CAPABILITIES, type AccessDeclaration, type Capability, type HostLocation, type HostRule } from '#platform';
import { decideAccess, principalOf } from '#token-binding';
import { assertProperty } from '../support/property.js';

/**
 * DESIGN 16's access rule, as the contract words it, against the one decision the guards apply on both
 * transports (`decideAccess` over `principalOf`), over scopes, host claims, declarations and requests.
 */
const RUNS = 20_000;

/** Row by row as DESIGN 16's table lists the broad scopes: `config:read` with `portal.r` only. */
const BROAD: Readonly<Record<string, readonly Capability[]>> = {
  'portal.r': ['tags:read', 'config:read'],
  'portal.w': ['tags:read', 'tags:write'],
  'portal.admin': CAPABILITIES.filter((c) => c !== 'config:read'),
};

/** The contract's table, written out independently of libs/token-binding/capabilities.ts. */
function modelCapabilities(scopes: readonly string[]): Set<string> {
  const fine = scopes.filter((s) => (CAPABILITIES as readonly string[]).includes(s));
  if (fine.length > 0) {
    const granted = new Set(fine);
    if (granted.has('tags:admin')) granted.add('tags:write');
    if (granted.has('tags:write')) granted.add('tags:read');
    return granted;
  }
  return new Set(['registry:register', 'registry:discover', ...scopes.flatMap((s) => BROAD[s] ?? [])]);
}

const hostValue = fc.oneof(
  fc.constantFrom('h1', 'h2', ' h1 ', 'h1\t', '', '  ', 'H1', 'h1\u200b'),
  fc.string({ maxLength: 6 }),
  fc.constantFrom(null, undefined, 7, true, ['h2'], { host: 'h2' }),
);
const scopeValue = fc.oneof(fc.constantFrom(...CAPABILITIES, 'portal.r', 'portal.w', 'portal.admin'), fc.string());
const location: fc.Arbitrary<HostLocation> = fc.oneof(
  fc.constantFrom('host', 'hostId').map((query) => ({ query })),
  fc.constantFrom('host', 'hostId').map((body) => ({ body })),
);
const declaration: fc.Arbitrary<AccessDeclaration | undefined> = fc.option(
  fc.record({
    capability: fc.option(fc.constantFrom(...CAPABILITIES), { nil: null }),
    hostRule: fc.constantFrom<HostRule>('own-host', 'global-admin', 'binding', 'public'),
    hostIn: fc.array(location, { maxLength: 2 }),
  }),
  { nil: undefined },
);
const bag = fc.oneof(
  fc.dictionary(fc.constantFrom('host', 'hostId', 'other'), hostValue),
  fc.constantFrom(undefined, null, 'h2', ['h2']),
);

/** A host no request can name (longer than any generated one): where a token's host claim names none. */
const NO_HOST = '\u0000 no host';

/**
 * The host a token acts for (DESIGN 16): none without a `host` claim (a global token); the trimmed claim
 * when it is a non-blank string; a claim that names no host binds the token to no host, never to all.
 */
const hostClaim = (value: unknown): string | null => {
  if (value === undefined) return null;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : NO_HOST;
};

function named(source: unknown, name: string): unknown {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return undefined;
  return (source as Record<string, unknown>)[name];
}

describe('decideAccess (property, pure)', () => {
  it('allows exactly what DESIGN 16 allows: declared, capable, and within the token host', async () => {
    await assertProperty(
      'decideAccess',
      fc.property(
        fc.record({
          scopes: fc.array(scopeValue, { maxLength: 4 }),
          host: hostValue,
          declaration,
          query: bag,
          body: bag,
        }),
        (input) => {
          const principal = principalOf({ sub: 's', scope: input.scopes.join(' '), host: input.host });
          const decision = decideAccess(principal, input.declaration, { query: input.query, body: input.body });
          const d = input.declaration;
          const host = hostClaim(input.host);
          const caps = modelCapabilities(input.scopes.flatMap((s) => s.split(' ')).filter((s) => s !== ''));
          let expected: string | undefined;
          if (d === undefined || d.hostRule === 'public') expected = 'undeclared';
          else if (d.capability !== null && !caps.has(d.capability)) expected = 'capability';
          else if (d.hostRule === 'global-admin' && host !== null) expected = 'global-admin';
          else if (d.hostRule === 'own-host' && host !== null) {
            const values = d.hostIn.map((l) =>
              'query' in l ? named(input.query, l.query) : named(input.body, l.body),
            );
            if (values.some((v) => typeof v === 'string' && v.trim() !== '' && v.trim() !== host)) expected = 'host';
          }
          expect(decision.allowed ? undefined : decision.reason).toBe(expected);
        },
      ),
      RUNS,
    );
  });

  it('a host-bound token never passes an own-host route whose request names another host', async () => {
    await assertProperty(
      'decideAccess host',
      fc.property(
        fc.record({
          scopes: fc.array(scopeValue, { maxLength: 4 }),
          other: fc.string({ minLength: 1 }).filter((s) => s.trim() !== '' && s.trim() !== 'h1'),
          where: location,
        }),
        ({ scopes, other, where }) => {
          const principal = principalOf({ sub: 's', scope: ['portal.admin', ...scopes].join(' '), host: 'h1' });
          const request =
            'query' in where
              ? { query: { [where.query]: other }, body: {} }
              : { query: {}, body: { [where.body]: other } };
          const decision = decideAccess(
            principal,
            { capability: null, hostRule: 'own-host', hostIn: [where] },
            request,
          );
          expect(decision.allowed).toBe(false);
        },
      ),
      RUNS,
    );
  });
});
