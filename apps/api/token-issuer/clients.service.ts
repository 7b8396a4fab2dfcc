import { Injectable } from '@nestjs/common';
import { DuplicateKeyError, OAuthClientRepository, type ClientOwner } from '#database';
import { badRequest, conflict, forbidden, newId, notFound, pageBody, pageWindow, type PageQuery } from '#platform';
import { can, capabilitiesOf, isGlobalAdmin, KNOWN_SCOPES, OPERATOR_SCOPES, type Principal } from '#token-binding';
import { generateSecret, hashSecret } from './client-secrets.js';
import { toClientView, type ClientPage, type ClientView, type ClientWithSecretView } from './client.view.js';
import type { CreateClientDto } from './dto/create-client.dto.js';

/**
 * Client records of the issuer (DESIGN 10), under the host rule (DESIGN 16): a host-bound admin manages
 * only its host's clients and gives them only scopes it holds; a global admin manages every client.
 */
@Injectable()
export class ClientsService {
  constructor(private readonly clients: OAuthClientRepository) {}

  async create(principal: Principal, body: CreateClientDto): Promise<ClientWithSecretView> {
    const host = blankToNull(body.host);
    const sid = blankToNull(body.sid);
    const scopes = [...new Set(body.scopes)];
    const unknown = scopes.filter((scope) => !KNOWN_SCOPES.has(scope));
    if (unknown.length > 0) {
      const message = `unknown scopes: ${unknown.join(', ')}`;
      throw badRequest(`A client may hold only scopes Bindery knows; ${message}`, [{ field: 'scopes', message }]);
    }
    const owner = ownerOf(principal);
    if (owner !== 'all') {
      // The guard refused another host by name; no host at all would make an operator client.
      if (host !== owner.host) throw forbidden(`This token manages only clients of host ${owner.host}`);
      const beyond = scopes.filter((scope) => !holds(principal, scope));
      if (beyond.length > 0) throw forbidden(`A client may get only scopes this token holds; not ${beyond.join(', ')}`);
    }
    const operator = scopes.some((scope) => OPERATOR_SCOPES.has(scope));
    if (!operator && (host === null || sid === null)) {
      const missing = [host === null ? 'host' : undefined, sid === null ? 'sid' : undefined].filter(
        (f) => f !== undefined,
      );
      throw badRequest(
        'A runtime client needs host and sid (only an operator client, with portal.admin or an admin capability, may have neither)',
        missing.map((field) => ({ field, message: `${field} is required for a client without an admin scope` })),
      );
    }
    const secret = generateSecret();
    try {
      const client = await this.clients.create({
        clientId: body.clientId ?? newId(),
        description: body.description ?? null,
        host,
        sid,
        envs: [...new Set(body.envs)],
        scopes,
        secretHash: await hashSecret(secret),
        updateUser: principal.subject,
      });
      return { ...toClientView(client), clientSecret: secret };
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw conflict('A client with that clientId already exists');
      throw error;
    }
  }

  /** The clients this caller manages, by client id, from an offset or after a cursor's client. */
  async list(principal: Principal, query: PageQuery): Promise<ClientPage> {
    const owner = ownerOf(principal);
    const scope = { list: 'oauth-clients', filter: { owner } };
    const window = pageWindow(query, scope, this.clients.keyset.accepts);
    const page = await this.clients.page(window, owner);
    return pageBody(window, scope, page, 'clients', page.rows.map(toClientView));
  }

  /** Another host's client is answered as if it did not exist (DESIGN 16). */
  async get(principal: Principal, clientId: string): Promise<ClientView> {
    const client = await this.clients.find(clientId, ownerOf(principal));
    if (client === null) throw notFound('No such client');
    return toClientView(client);
  }

  async delete(principal: Principal, clientId: string): Promise<void> {
    if (!(await this.clients.delete(clientId, ownerOf(principal)))) throw notFound('No such client');
  }

  /**
   * A new secret that works at once; the old one keeps working for `graceSec`. A host-bound admin rotates only
   * clients whose scopes it holds: the new secret would give it the client's tokens (DESIGN 16: it gives a
   * client only scopes it holds itself).
   */
  async rotate(principal: Principal, clientId: string, graceSec: number): Promise<ClientWithSecretView> {
    const owner = ownerOf(principal);
    const grantable = owner === 'all' ? null : [...KNOWN_SCOPES].filter((scope) => holds(principal, scope));
    const secret = generateSecret();
    const hash = await hashSecret(secret);
    const client = await this.clients.rotateSecret(clientId, hash, graceSec, principal.subject, owner, grantable);
    if (client !== null) return { ...toClientView(client), clientSecret: secret };
    // Nothing was rotated: say why, after the fact (the update itself decided, in one statement).
    const existing = await this.clients.find(clientId, owner);
    if (existing === null) throw notFound('No such client');
    const beyond = existing.scopes.filter((scope) => !holds(principal, scope));
    throw forbidden(`A client's secret is rotated only by a token holding its scopes; not ${beyond.join(', ')}`);
  }
}

/** A scope is held when everything it grants is granted to this token (portal.admin holds portal.w). */
function holds(principal: Principal, scope: string): boolean {
  return [...capabilitiesOf(new Set([scope]))].every((capability) => can(principal, capability));
}

/** A global admin of clients owns every client; a host-bound admin only its host's. */
function ownerOf(principal: Principal): ClientOwner {
  if (isGlobalAdmin(principal, 'clients:admin')) return 'all';
  // The route needs clients:admin, so a caller without host here is a wiring fault: refuse, never widen.
  if (principal.host === null) throw forbidden('Managing clients needs the capability clients:admin');
  return { host: principal.host };
}

function blankToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value.trim() === '' ? null : value.trim();
}
