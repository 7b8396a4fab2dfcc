// Baseline of the config benchmark: raw Fastify + pg answering GET /configs with the product's own merge
// statement (MERGED_PROPERTIES), the same merge by rank, key order, ETag and If-None-Match → 304, no
// authentication or binding; the same pool size as the api.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { query } from './baseline-query.js';
import { serve } from './serve.js';

const { MERGED_PROPERTIES } = await import(join(process.env.DIST ?? 'dist', 'libs/database/index.js'));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });

app.get('/configs', async (request, reply) => {
  const q = request.query;
  const { rows } = await query(pool, MERGED_PROPERTIES, [
    q.host,
    q.serviceId ?? null,
    q.productId ?? null,
    q.productVersion ?? null,
    q.envTag ?? null,
  ]);
  const merged = new Map();
  for (const row of rows) merged.set(row.key, row.value);
  const body = JSON.stringify(Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  void reply.header('etag', etag).header('content-type', 'application/json');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return body;
});

await serve(app, pool);
