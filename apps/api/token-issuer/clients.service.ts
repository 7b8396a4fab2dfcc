import { Injectable } from '@nestjs/common';
import { DuplicateKeyError, OAuthClientRepository } from '#database';
import { badRequest, conflict, newId, notFound } from '#platform';
import { SCOPE_ADMIN, type Principal } from '#token-binding';
import { generateSecret, hashSecret } from './client-secrets.js';
import { toClientView, type ClientPage, type ClientView, type ClientWithSecretView } from './client.view.js';
import type { CreateClientDto } from './dto/create-client.dto.js';

/** Client records of the issuer (DESIGN 10), for operators (`portal.admin`, checked by the route). */
@Injectable()
export class ClientsService {
  constructor(private readonly clients: OAuthClientRepository) {}

  async create(principal: Principal, body: CreateClientDto): Promise<ClientWithSecretView> {
    const host = blankToNull(body.host);
    const sid = blankToNull(body.sid);
    const operator = body.scopes.includes(SCOPE_ADMIN);
    if (!operator && (host === null || sid === null)) {
      const missing = [host === null ? 'host' : undefined, sid === null ? 'sid' : undefined].filter(
        (f) => f !== undefined,
      );
      throw badRequest(
        'A runtime client needs host and sid (only an operator client, with portal.admin, may have neither)',
        missing.map((field) => ({ field, message: `${field} is required for a client without portal.admin` })),
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
        scopes: [...new Set(body.scopes)],
        secretHash: await hashSecret(secret),
        updateUser: principal.subject,
      });
      return { ...toClientView(client), clientSecret: secret };
    } catch (error) {
      if (error instanceof DuplicateKeyError) throw conflict('A client with that clientId already exists');
      throw error;
    }
  }

  async list(offset: number, limit: number): Promise<ClientPage> {
    const [clients, total] = await this.clients.page(offset, limit);
    return { total, clients: clients.map(toClientView) };
  }

  async get(clientId: string): Promise<ClientView> {
    const client = await this.clients.find(clientId);
    if (client === null) throw notFound('No such client');
    return toClientView(client);
  }

  async delete(clientId: string): Promise<void> {
    if (!(await this.clients.delete(clientId))) throw notFound('No such client');
  }

  /** A new secret that works at once; the old one keeps working for `graceSec`. */
  async rotate(principal: Principal, clientId: string, graceSec: number): Promise<ClientWithSecretView> {
    const secret = generateSecret();
    const client = await this.clients.rotateSecret(clientId, await hashSecret(secret), graceSec, principal.subject);
    if (client === null) throw notFound('No such client');
    return { ...toClientView(client), clientSecret: secret };
  }
}

function blankToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value.trim() === '' ? null : value.trim();
}
