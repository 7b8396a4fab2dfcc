import { expect } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { call, unique, type TestApi } from '../support/api.js';

/** An id of at most 22 characters, unique to this run (schema and tag ids are bounded). */
export const newId = (prefix: string): string => unique(prefix).replace(/-/g, '').slice(0, 22);

/** Creates a schema through the api (201 asserted) and answers its id. */
export async function createSchema(api: TestApi, token: string, body: Record<string, unknown> = {}): Promise<string> {
  const schemaId = newId('bs');
  const res = await call(api, 'POST', '/schemas', { token, body: { schemaId, schemaName: 'b', ...body } });
  expect(res.statusCode).toBe(201);
  return schemaId;
}

/** The tag ids linked to a schema, read from the database, in order. */
export const schemaLinks = async (db: DataSource, schemaId: string): Promise<string[]> =>
  (
    await db.query<{ tag_id: string }[]>(
      `select tag_id from entity_tag where entity_type = 'schema' and entity_id = $1 order by tag_id`,
      [schemaId],
    )
  ).map((r) => r.tag_id);
