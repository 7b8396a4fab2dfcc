import { expect } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { DataSource } from 'typeorm';
import { unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

/** What the tests know about one entity type: the wire contract (DESIGN 5.1), not the implementation. */
export interface EntityCase {
  readonly entityType: string;
  readonly path: string;
  readonly table: string;
  readonly idField: string;
  readonly nameField: string;
  /** A complete valid set of the type's own fields. */
  readonly fields: Readonly<Record<string, string>>;
}

export const ENTITY_CASES: readonly EntityCase[] = [
  {
    entityType: 'schema',
    path: 'schemas',
    table: 'schema',
    idField: 'schemaId',
    nameField: 'schemaName',
    fields: {
      schemaName: 'Pet',
      schemaVersion: '1.0.0',
      schemaType: 'json-schema',
      schemaDesc: 'a pet',
      schemaBody: '{"type":"object"}',
    },
  },
  {
    entityType: 'product',
    path: 'products',
    table: 'product',
    idField: 'productId',
    nameField: 'productName',
    fields: { productName: 'Petstore', productVersion: '2.1', productDesc: 'sells pets' },
  },
  {
    entityType: 'document',
    path: 'documents',
    table: 'document',
    idField: 'documentId',
    nameField: 'title',
    fields: { title: 'Guide', contentType: 'text/markdown', body: '# Hello\n\nworld' },
  },
];

export type Json = Record<string, unknown>;

/** Requests as one caller (a bearer token, or none). */
export class As {
  constructor(
    private readonly api: TestApi,
    private readonly bearer?: string,
  ) {}

  private send(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
    ifMatch?: string,
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = {};
    if (this.bearer !== undefined) headers.authorization = `Bearer ${this.bearer}`;
    if (ifMatch !== undefined) headers['if-match'] = ifMatch;
    return this.api.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as Json }),
    });
  }

  get = (url: string): Promise<LightMyRequestResponse> => this.send('GET', url);
  post = (url: string, body: unknown): Promise<LightMyRequestResponse> => this.send('POST', url, body);
  put = (url: string, body: unknown, ifMatch?: string): Promise<LightMyRequestResponse> =>
    this.send('PUT', url, body, ifMatch);
  delete = (url: string, ifMatch?: string): Promise<LightMyRequestResponse> =>
    this.send('DELETE', url, undefined, ifMatch);
}

export function dataSource(api: TestApi): DataSource {
  return api.app.get(DataSource);
}

/** The tag ids linked to an entity, read straight from the table. */
export async function linksInDb(api: TestApi, entityType: string, entityId: string): Promise<string[]> {
  const rows: { tag_id: string }[] = await dataSource(api).query(
    'select tag_id from entity_tag where entity_type = $1 and entity_id = $2',
    [entityType, entityId],
  );
  return rows.map((r) => r.tag_id).sort();
}

/**
 * Links written straight to the table, as they could be before every link write checked that the entity's
 * host sees the tag (links of that time may still join an entity to another host's tag).
 */
export async function linkInDb(
  api: TestApi,
  entityType: string,
  entityId: string,
  entityHostId: string | null,
  tagIds: readonly string[],
): Promise<void> {
  await dataSource(api).query(
    `insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id) select $1, $2, $3, unnest($4::varchar[])`,
    [entityType, entityId, entityHostId, tagIds],
  );
}

export async function rowsInDb(api: TestApi, c: EntityCase, id: string): Promise<number> {
  const rows: unknown[] = await dataSource(api).query(`select 1 from ${c.table} where ${c.table}_id = $1`, [id]);
  return rows.length;
}

/** Creates tags through the API as an admin; returns their ids in the order of `names`. */
export async function createTags(
  api: TestApi,
  names: readonly string[],
  hostId: string | null = null,
): Promise<string[]> {
  const admin = new As(api, await callers.admin());
  return Promise.all(
    names.map(async (tagName) => {
      const res = await admin.post('/tags', { tagName, hostId });
      expect(res.statusCode).toBe(201);
      return res.json<{ tagId: string }>().tagId;
    }),
  );
}

/** Inserts `count` global tags in one statement; returns their ids sorted. */
export async function insertTags(api: TestApi, count: number): Promise<string[]> {
  const prefix = unique('b');
  const rows: { tag_id: string }[] = await dataSource(api).query(
    `insert into tag (tag_id, tag_name, update_ts, aggregate_version)
     select $1 || '_' || i, $1 || '-tag-' || i, now(), 1 from generate_series(1, $2::int) i
     returning tag_id`,
    [prefix, count],
  );
  return rows.map((r) => r.tag_id).sort();
}

/** A problem+json answer with this status. */
export function expectProblem(res: LightMyRequestResponse, status: number): Json {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json<Json>();
  expect(body.status).toBe(status);
  return body;
}
