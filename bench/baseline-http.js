// Baseline of the auth benchmark: raw Fastify + pg serving GET /tags/:id with the same SELECT the api
// runs, no authentication, no framework layers; the same pool size as the api (TypeORM's default 10).
import Fastify from 'fastify';
import pg from 'pg';
import { serve } from './serve.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });

const SELECT = `select tag_id, host_id, tag_name, tag_desc, update_user, update_ts, aggregate_version
  from tag where tag_id = $1`;

app.get('/tags/:tagId', async (request, reply) => {
  const { rows } = await pool.query(SELECT, [request.params.tagId]);
  if (rows.length === 0) return reply.code(404).send({ status: 404, title: 'Not Found' });
  const t = rows[0];
  void reply.header('etag', `W/"${t.aggregate_version}"`);
  return {
    tagId: t.tag_id,
    hostId: t.host_id,
    tagName: t.tag_name,
    tagDesc: t.tag_desc,
    updateUser: t.update_user,
    updateTs: t.update_ts.toISOString(),
    aggregateVersion: t.aggregate_version,
  };
});

await serve(app, pool);
