import type { AccessDeclaration, Capability, HostLocation } from '#platform';
import { can, UNUSABLE_HOST, type Principal } from './claims.js';
import { SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE } from './scopes.js';

/** The broad scope that also grants each capability, named beside it in a 403 (DESIGN 16 table). */
const BROAD_SCOPE_OF: Readonly<Record<Capability, string | undefined>> = {
  'tags:read': SCOPE_READ,
  'tags:write': SCOPE_WRITE,
  'tags:admin': SCOPE_ADMIN,
  'config:read': SCOPE_READ,
  'config:admin': SCOPE_ADMIN,
  'registry:register': undefined,
  'registry:discover': undefined,
  'registry:read': SCOPE_ADMIN,
  'clients:admin': SCOPE_ADMIN,
};

/** Where a request's host-naming values are read from (HTTP: query and body; JSON-RPC: params as both). */
export interface AccessRequest {
  readonly query: unknown;
  readonly body: unknown;
}

export type AccessDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly reason: 'capability'; readonly capability: Capability; readonly broad?: string }
  | { readonly allowed: false; readonly reason: 'global-admin' | 'host' | 'undeclared'; readonly detail: string };

const ALLOW: AccessDecision = { allowed: true };

function valueAt(request: AccessRequest, location: HostLocation): unknown {
  const source = 'query' in location ? request.query : request.body;
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return undefined;
  return (source as Readonly<Record<string, unknown>>)['query' in location ? location.query : location.body];
}

/**
 * The one decision of DESIGN 16 for a verified caller, before the binding rule and before any SQL: the
 * declared capability, then the host rule (a global-admin route refuses a host-bound token; an own-host
 * route refuses a request naming another host). Undeclared means refused (fail closed).
 */
export function decideAccess(
  principal: Principal,
  declaration: AccessDeclaration | undefined,
  request: AccessRequest,
): AccessDecision {
  if (declaration === undefined || declaration.hostRule === 'public') {
    return { allowed: false, reason: 'undeclared', detail: 'This route declares no access for tokens' };
  }
  const { capability } = declaration;
  if (capability !== null && !can(principal, capability)) {
    return { allowed: false, reason: 'capability', capability, broad: BROAD_SCOPE_OF[capability] };
  }
  if (declaration.hostRule === 'global-admin' && principal.host !== null) {
    return { allowed: false, reason: 'global-admin', detail: 'Only a token without a host claim may do this' };
  }
  if (declaration.hostRule !== 'own-host' || principal.host === null) return ALLOW;
  for (const location of declaration.hostIn) {
    const named = valueAt(request, location);
    // Only a string can name another host; other shapes are left to validation (400).
    if (typeof named === 'string' && named.trim() !== '' && named.trim() !== principal.host) {
      return {
        allowed: false,
        reason: 'host',
        detail:
          principal.host === UNUSABLE_HOST
            ? "This token's host claim names no host, so it acts for none; the request names a host"
            : `This token acts for host ${principal.host} only; the request names another host`,
      };
    }
  }
  return ALLOW;
}

/** The 403's words for a missing capability, naming the broad scope that grants it too (both transports). */
export function capabilitySentence(decision: { readonly capability: Capability; readonly broad?: string }): string {
  const also = decision.broad === undefined ? '' : ` (the scope ${decision.broad} grants it too)`;
  return `The token lacks the capability ${decision.capability}${also}`;
}
