// Baseline of the config benchmark: raw Fastify + pg answering GET /configs with the product's own merge
// statement (MERGED_PROPERTIES), the same merge by rank kept per address and layer versions, key order, ETag
// and If-None-Match → 304, no authentication or binding; the same pool size as the api.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { query } from './baseline-query.js';
import { serve } from './serve.js';

const { MERGED_PROPERTIES } = await import(join(process.env.DIST ?? 'dist', 'libs/database/index.js'));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });

// The merge of each address, with the versions it was made from: what the api keeps too (like for like).
const merges = new Map();

app.get('/configs', async (request, reply) => {
  const q = request.query;
  const address = JSON.stringify([q.host, q.serviceId, q.productId, q.productVersion, q.envTag]);
  const known = merges.get(address);
  const { rows } = await query(pool, MERGED_PROPERTIES, [
    q.host,
    q.serviceId ?? null,
    q.productId ?? null,
    q.productVersion ?? null,
    q.envTag ?? null,
    known?.versions ?? null,
  ]);
  let merged = known?.merged;
  if (known === undefined || rows[0].versions !== known.versions) {
    merged = new Map();
    for (const row of rows) if (row.key !== null) merged.set(row.key, row.value);
    merges.set(address, { versions: rows[0].versions, merged });
  }
  const body = JSON.stringify(Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  void reply.header('etag', etag).header('content-type', 'application/json');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  return body;
});

await serve(app, pool);
