import type { JWTPayload } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from '@jest/globals';
import { sqlDuring, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';

export const ENDPOINTS = ['configs', 'certs', 'files'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

/** A query parameter given once (string) or repeated (array); values are sent exactly as written. */
export type Query = Readonly<Record<string, string | readonly string[]>>;

export function queryString(query: Query): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const v of typeof value === 'string' ? [value] : value) {
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
    }
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** Every token a test file signs, so it can prove that none of them reached a log line. */
export const issuedTokens: string[] = [];

export async function signed(claims: JWTPayload, options?: Parameters<typeof token>[1]): Promise<string> {
  const jwt = await token(claims, options);
  issuedTokens.push(jwt);
  return jwt;
}

export async function adminToken(): Promise<string> {
  const jwt = await callers.admin();
  issuedTokens.push(jwt);
  return jwt;
}

export interface Sent {
  readonly res: LightMyRequestResponse;
  readonly queries: number;
}

/** One request through the real HTTP stack, counting the SQL statements it caused. */
export async function send(
  api: TestApi,
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  path: string,
  options: { query?: Query; authorization?: string; headers?: Record<string, string>; payload?: unknown } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const { result, queries } = await sqlDuring(() =>
    api.app.inject({
      method,
      url: `${path}${queryString(options.query ?? {})}`,
      headers,
      ...(options.payload === undefined ? {} : { payload: options.payload as Record<string, unknown> }),
    }),
  );
  return { res: result, queries };
}

export const bearer = (jwt: string): string => `Bearer ${jwt}`;

/** Writes one layer's properties through the admin API (asserting success). */
export async function putProperties(api: TestApi, query: Query, properties: Record<string, unknown>): Promise<void> {
  const { res } = await send(api, 'PUT', '/config-server/admin/properties', {
    query,
    authorization: bearer(await adminToken()),
    payload: { properties },
  });
  expect(res.statusCode).toBe(200);
}

/** Writes one layer's files of a kind through the admin API (asserting success). */
export async function putFiles(
  api: TestApi,
  query: Query,
  kind: 'cert' | 'file',
  files: Record<string, Buffer | string>,
): Promise<void> {
  const encoded = Object.fromEntries(
    Object.entries(files).map(([name, content]) => [name, Buffer.from(content).toString('base64')]),
  );
  const { res } = await send(api, 'PUT', '/config-server/admin/files', {
    query: { ...query, kind },
    authorization: bearer(await adminToken()),
    payload: { files: encoded },
  });
  expect(res.statusCode).toBe(200);
}

export const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');

/** A 401/403 never reached the database. */
export function expectNoSql(sent: Sent): void {
  expect(sent.queries).toBe(0);
}

export function expectBindingRejection(sent: Sent, sentence: string): void {
  expect(sent.res.statusCode).toBe(403);
  expect(sent.res.headers['content-type']).toMatch(/^text\/plain/);
  expect(sent.res.body).toBe(sentence);
  expectNoSql(sent);
}

export function expectProblem(sent: Sent, status: number): Record<string, unknown> {
  expect(sent.res.statusCode).toBe(status);
  expect(sent.res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = sent.res.json<Record<string, unknown>>();
  expect(problem.status).toBe(status);
  expect(typeof problem.detail).toBe('string');
  return problem;
}

export const SENTENCES = {
  host: 'Token host does not match requested host',
  sid: 'Token sid does not match requested serviceId',
  env: 'Token env does not match requested envTag',
} as const;
