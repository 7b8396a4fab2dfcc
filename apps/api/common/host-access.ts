import { forbidden } from '#platform';
import { isAdmin, type Principal } from '#token-binding';
import type { HostScope } from '#database';

/**
 * Host visibility for host-scoped resources (DESIGN 4.3): admins see every host; other callers see
 * global rows (host null) and rows of their own token's `host`.
 */
export function canSee(principal: Principal, hostId: string | null): boolean {
  return isAdmin(principal) || hostId === null || hostId === principal.host;
}

/** Writing a global row or another host's row needs `portal.admin`. */
export function canWrite(principal: Principal, hostId: string | null): boolean {
  return isAdmin(principal) || (hostId !== null && hostId === principal.host);
}

export function assertCanWrite(principal: Principal, hostId: string | null, what: string): void {
  if (!canWrite(principal, hostId)) {
    throw forbidden(
      hostId === null
        ? `Writing a global ${what} needs the scope portal.admin`
        : `Writing a ${what} of host ${hostId} needs a token for that host or the scope portal.admin`,
    );
  }
}

/** The rows `principal` may see, as a scope the repositories turn into SQL. */
export function scopeOf(principal: Principal): HostScope {
  return isAdmin(principal) ? { allHosts: true } : { allHosts: false, host: principal.host };
}
