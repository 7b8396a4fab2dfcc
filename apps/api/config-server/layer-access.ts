import type { LayerAddress } from '#database';
import { badRequest, forbidden, hasControlChars } from '#platform';
import type { Principal } from '#token-binding';
import type { ChangeAuthor } from './layer-history.js';

/** Longest `X-Change-Reason` accepted (DESIGN 14). */
export const MAX_REASON_LENGTH = 200;

/**
 * An admin token with a `host` claim manages only its host's layers; one without is a global admin
 * (DESIGN 14). Decided from the address alone, before any SQL: the caller named the host, so 403 tells it
 * nothing it did not know.
 */
export function assertLayerHost(principal: Principal, host: string): void {
  if (principal.host !== null && principal.host !== host) {
    throw forbidden(`This token is for host ${principal.host}; it manages only that host's config layers`);
  }
}

/** `assertLayerHost` for an address, answering it for chaining. */
export function ownLayer(principal: Principal, address: LayerAddress): LayerAddress {
  assertLayerHost(principal, address.host);
  return address;
}

/** The host whose layers `GET layers` lists: a host-bound admin's own, which the query may only repeat. */
export function listedHost(principal: Principal, requested: string | undefined): string | undefined {
  if (principal.host === null) return requested;
  if (requested !== undefined) assertLayerHost(principal, requested);
  return principal.host;
}

/** The `X-Change-Reason` header as a version's reason: null when absent or blank, else checked (400). */
export function changeReason(header: string | undefined): string | null {
  const reason = header?.trim();
  if (reason === undefined || reason === '') return null;
  if (reason.length > MAX_REASON_LENGTH || hasControlChars(reason)) {
    const message = `X-Change-Reason must be at most ${MAX_REASON_LENGTH} characters without control characters`;
    throw badRequest(message, [{ field: 'X-Change-Reason', message }]);
  }
  return reason;
}

/** Who writes and why: the token's subject and the reason header. */
export function authorOf(principal: Principal, reasonHeader: string | undefined): ChangeAuthor {
  return { actor: principal.subject, reason: changeReason(reasonHeader) };
}
