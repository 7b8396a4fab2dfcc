import { forbidden } from '#platform';
import { can, isGlobalAdmin, type Principal } from '#token-binding';
import type { HostVisibility } from '#database';

/**
 * Host visibility for tags and entities (DESIGN 4.3, 16): a global admin (no `host` claim, `tags:admin`)
 * sees every host; everyone else sees global rows (host null) and rows of their own token's `host`.
 */
export function canSee(principal: Principal, hostId: string | null): boolean {
  return hostId === null || hostId === principal.host || isGlobalAdmin(principal, 'tags:admin');
}

/**
 * Writing a row of one's own host needs `tags:write` (checked by the route); a global row needs
 * `tags:admin`; another host's row a global admin. A `host` claim never writes another host's data.
 */
function canWrite(principal: Principal, hostId: string | null): boolean {
  if (hostId === null) return can(principal, 'tags:admin');
  return hostId === principal.host || isGlobalAdmin(principal, 'tags:admin');
}

export function assertCanWrite(principal: Principal, hostId: string | null, what: string): void {
  if (!canWrite(principal, hostId)) {
    throw forbidden(
      hostId === null
        ? `Writing a global ${what} needs the capability tags:admin (or the scope portal.admin)`
        : `Writing a ${what} of host ${hostId} needs a token for that host, or tags:admin without a host claim`,
    );
  }
}

/** The rows `principal` may see, as the host visibility the repositories turn into SQL. */
export function visibilityOf(principal: Principal): HostVisibility {
  return isGlobalAdmin(principal, 'tags:admin') ? { allHosts: true } : { allHosts: false, host: principal.host };
}
