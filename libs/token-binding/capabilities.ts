import { CAPABILITIES, type Capability } from '#platform';
import { SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE } from './scopes.js';

const CAPABILITY_SET: ReadonlySet<string> = new Set(CAPABILITIES);

export const isCapability = (scope: string): scope is Capability => CAPABILITY_SET.has(scope);

/** Every scope Bindery understands: the upstream portal's broad ones and the capabilities (DESIGN 16). */
export const KNOWN_SCOPES: ReadonlySet<string> = new Set([SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN, ...CAPABILITIES]);

/** Any token, with or without broad scopes, may register and discover (DESIGN 8, as before capabilities). */
const ANY_TOKEN: readonly Capability[] = ['registry:register', 'registry:discover'];

/**
 * What each broad scope grants, row by row as DESIGN 16's table lists them: tag reads come with any of the
 * three, a runtime's config read (section 7) with `portal.r` alone.
 */
// A Map, not an object: a scope named `constructor` or `__proto__` must find nothing.
const BROAD: ReadonlyMap<string, readonly Capability[]> = new Map<string, readonly Capability[]>([
  [SCOPE_READ, ['tags:read', 'config:read']],
  [SCOPE_WRITE, ['tags:read', 'tags:write']],
  [SCOPE_ADMIN, CAPABILITIES.filter((c) => c !== 'config:read')],
]);

/** Within a family an admin form implies the lesser ones (a tag admin writes and reads tags). */
const IMPLIED: Readonly<Partial<Record<Capability, readonly Capability[]>>> = {
  'tags:write': ['tags:read'],
  'tags:admin': ['tags:write', 'tags:read'],
};

/**
 * The capabilities a token's scopes grant (DESIGN 16): a token carrying any capability scope is judged by
 * those alone; one with none by its broad scopes exactly as before.
 */
export function capabilitiesOf(scopes: ReadonlySet<string>): ReadonlySet<Capability> {
  const granted = new Set<Capability>();
  const fine = [...scopes].filter(isCapability);
  if (fine.length > 0) {
    for (const capability of fine) for (const c of [capability, ...(IMPLIED[capability] ?? [])]) granted.add(c);
    return granted;
  }
  for (const c of ANY_TOKEN) granted.add(c);
  for (const scope of scopes) for (const c of BROAD.get(scope) ?? []) granted.add(c);
  return granted;
}

/** The admin form of each capability: holding it without a `host` claim makes a global admin of that data. */
export const ADMIN_FORM: Readonly<Record<Capability, Capability>> = {
  'tags:read': 'tags:admin',
  'tags:write': 'tags:admin',
  'tags:admin': 'tags:admin',
  'config:read': 'config:admin',
  'config:admin': 'config:admin',
  'registry:register': 'registry:read',
  'registry:discover': 'registry:read',
  'registry:read': 'registry:read',
  'clients:admin': 'clients:admin',
};

/** Scopes that make a client without host and sid an operator client (DESIGN 16). */
export const OPERATOR_SCOPES: ReadonlySet<string> = new Set([
  SCOPE_ADMIN,
  'tags:admin',
  'config:admin',
  'clients:admin',
  'registry:read',
]);
