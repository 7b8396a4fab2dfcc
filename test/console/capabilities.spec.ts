import { describe, expect, it } from '@jest/globals';
import { CAPABILITIES as SERVER_CAPABILITIES } from '#platform';
import {
  can,
  capabilitiesOf as serverCapabilitiesOf,
  principalOf,
  SCOPE_ADMIN,
  SCOPE_READ,
  SCOPE_WRITE,
} from '#token-binding';
import { assertCanWrite } from '../../apps/api/common/host-access.js';
import {
  CAPABILITIES,
  capabilitiesOf,
  claimsOf,
  mayCreateTags,
  mayWriteTag,
} from '../../apps/console/src/capabilities.js';

/**
 * The console computes what a token allows in the page (apps/console/src/capabilities.ts), so it offers only
 * what the api then accepts. A differential check against the api's own functions (DESIGN 16), over every
 * combination of the scopes Bindery knows plus one it does not.
 */
const SCOPES = [SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN, ...SERVER_CAPABILITIES, 'openid'];

function* subsets<T>(items: readonly T[]): Generator<T[]> {
  for (let mask = 0; mask < 1 << items.length; mask++) yield items.filter((_, bit) => (mask >> bit) & 1);
}

const sorted = (set: ReadonlySet<string>): string[] => [...set].sort();

/** Whether the api lets the token write a tag of `hostId`: the route's tags:write, then the host rule. */
function serverWrites(scopes: readonly string[], host: string | undefined, hostId: string | null): boolean {
  const principal = principalOf({ sub: 'someone', scope: scopes.join(' '), ...(host === undefined ? {} : { host }) });
  if (!can(principal, 'tags:write')) return false;
  try {
    assertCanWrite(principal, hostId, 'tag');
    return true;
  } catch {
    return false;
  }
}

describe('the console’s capability rule', () => {
  it('knows the api’s capabilities, in the same order', () => {
    expect([...CAPABILITIES]).toEqual([...SERVER_CAPABILITIES]);
  });

  it('grants exactly what the api grants, for every combination of scopes', () => {
    const differ: unknown[] = [];
    let compared = 0;
    for (const scopes of subsets(SCOPES)) {
      const [page, api] = [sorted(capabilitiesOf(scopes)), sorted(serverCapabilitiesOf(new Set(scopes)))];
      if (page.join(' ') !== api.join(' ')) differ.push({ scopes, page, api });
      compared++;
    }
    expect(differ).toEqual([]);
    expect(compared).toBe(2 ** SCOPES.length);
  });

  it('reads subject, host and scopes from the claims as the api does', () => {
    const hosts: unknown[] = [undefined, 'h1', ' h1 ', '', '   ', 'h\u0001x', 7, null];
    const subjects: Record<string, unknown>[] = [
      {},
      { sub: 'alice' },
      { sub: '  ', client_id: 'ci' },
      { cid: 'c\u007fid' },
      { sub: 5, client_id: 'x'.repeat(300) },
    ];
    const scopeClaims: Record<string, unknown>[] = [
      {},
      { scope: 'portal.r  tags:write' },
      { scp: ['portal.admin', '', 3] },
      { scp: 'tags:read config:admin', scope: 'portal.w' },
      { scp: 'portal.r', scope: ['tags:admin'] },
    ];
    for (const host of hosts) {
      for (const subject of subjects) {
        for (const scopeClaim of scopeClaims) {
          const claims = { ...subject, ...scopeClaim, ...(host === undefined ? {} : { host }) };
          const page = claimsOf(claims);
          const api = principalOf(claims);
          expect({ claims, subject: page.subject, host: page.host, scopes: sorted(page.scopes) }).toEqual({
            claims,
            subject: api.subject,
            host: api.host,
            scopes: sorted(api.scopes),
          });
          expect(sorted(page.capabilities)).toEqual(sorted(api.capabilities));
        }
      }
    }
  });

  it('offers a tag write exactly when the api accepts it, for every combination of scopes and hosts', () => {
    const differ: unknown[] = [];
    for (const scopes of subsets(SCOPES)) {
      for (const host of [undefined, 'h1', ' ']) {
        const who = claimsOf({ scope: scopes.join(' '), ...(host === undefined ? {} : { host }) });
        const api = [null, 'h1', 'h2'].map((hostId) => serverWrites(scopes, host, hostId));
        const page = [null, 'h1', 'h2'].map((hostId) => mayWriteTag(who, hostId));
        if (page.join() !== api.join()) differ.push({ scopes, host, page, api });
        if (mayCreateTags(who) !== api.some(Boolean)) differ.push({ scopes, host, creates: mayCreateTags(who) });
      }
    }
    expect(differ).toEqual([]);
  });

  it('judges a token with any capability scope by those alone, and ignores unknown names', () => {
    expect(sorted(capabilitiesOf(['tags:read', 'portal.admin']))).toEqual(['tags:read']);
    expect(sorted(capabilitiesOf(['tags:admin']))).toEqual(['tags:admin', 'tags:read', 'tags:write']);
    expect(sorted(capabilitiesOf([]))).toEqual(['registry:discover', 'registry:register']);
    // Scope names are looked up in a Map: names of Object.prototype find nothing, on either side.
    const prototypeNames = ['constructor', '__proto__', 'toString'];
    expect(sorted(capabilitiesOf(prototypeNames))).toEqual(['registry:discover', 'registry:register']);
    expect(sorted(serverCapabilitiesOf(new Set(prototypeNames)))).toEqual(sorted(capabilitiesOf(prototypeNames)));
  });
});
