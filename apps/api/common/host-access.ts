import { forbidden } from '#platform';
import { isAdmin, type Principal } from '#token-binding';
import type { HostVisibility } from '#database';

/**
 * Host visibility for host-scoped resources (DESIGN 4.3): admins see every host; other callers see
 * global rows (host null) and rows of their own token's `host`.
 */
export function canSee(principal: Principal, hostId: string | null): boolean {
  return isAdmin(principal) || hostId === null || hostId === principal.host;
}

/** Writing a global row or another host's row needs `portal.admin`. */
function canWrite(principal: Principal, hostId: string | null): boolean {
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

/** The rows `principal` may see, as the host visibility the repositories turn into SQL. */
export function visibilityOf(principal: Principal): HostVisibility {
  return isAdmin(principal) ? { allHosts: true } : { allHosts: false, host: principal.host };
}
