// Baseline of the auth benchmark: raw Fastify + pg serving GET /tags/:id with the same SELECT the api
// runs, no authentication, no framework layers; the same pool size as the api (TypeORM's default 10).
import Fastify from 'fastify';
import pg from 'pg';
import { query } from './baseline-query.js';
import { serve } from './serve.js';
import { SELECT_TAG, tagView } from './tag-row.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });

app.get('/tags/:tagId', async (request, reply) => {
  const { rows } = await query(pool, SELECT_TAG, [request.params.tagId]);
  if (rows.length === 0) return reply.code(404).send({ status: 404, title: 'Not Found' });
  const t = rows[0];
  void reply.header('etag', `W/"${t.aggregate_version}"`);
  return tagView(t);
});

await serve(app, pool);
