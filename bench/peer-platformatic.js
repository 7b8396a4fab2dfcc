// The peer of the peer benchmark: @platformatic/db (REST over PostgreSQL on Fastify) serving the same
// `tag` table, with JWT authorization: the bench issuer's public key, ES256, issuer and audience checked,
// a role from the token's `roles` claim allowed to find and save tags.
// Environment: DATABASE_URL, POOL_SIZE, PUBLIC_KEY_FILE, JWT_ISSUER, JWT_AUDIENCE; PEER_MAJOR (2: the
// `@platformatic/db` dependency, 3: `platformatic-db3`, which needs Node 22.19); PEER_LOG_LEVEL (default
// `info`, what platformatic's generator writes for a new project: two lines per request); PEER_JWT_CACHE_TTL_MS
// (0, the default: every token verified; else fast-jwt's verification cache with that time to live).
import { readFileSync } from 'node:fs';

const major = Number(process.env.PEER_MAJOR ?? 2);
const cacheTtl = Number(process.env.PEER_JWT_CACHE_TTL_MS ?? 0);

const config = {
  server: { hostname: '127.0.0.1', port: 0, logger: { level: process.env.PEER_LOG_LEVEL ?? 'info' } },
  db: {
    connectionString: process.env.DATABASE_URL,
    poolSize: Number(process.env.POOL_SIZE ?? 10),
    graphql: false,
    openapi: true,
    // Only the table the mix uses: a relation between two other tables (config_layer_version to
    // config_layer) with one of them left out makes sql-openapi fail, and an ignore list ages with the schema.
    include: { tag: true },
  },
  authorization: {
    roleKey: 'roles',
    jwt: {
      secret: { public: readFileSync(process.env.PUBLIC_KEY_FILE, 'utf8') },
      verify: {
        algorithms: ['ES256'],
        allowedIss: process.env.JWT_ISSUER,
        allowedAud: process.env.JWT_AUDIENCE,
        ...(cacheTtl > 0 ? { cache: true, cacheTTL: cacheTtl } : {}),
      },
    },
    rules: [{ role: 'tag-writer', entity: 'tag', find: true, save: true, delete: false }],
  },
};

let address;
let close;
if (major >= 3) {
  // 3.x has no buildServer: the capability that `wattpm start` runs in a worker, here on the main thread.
  const { create } = await import('platformatic-db3');
  const app = await create(process.cwd(), {
    $schema: 'https://schemas.platformatic.dev/@platformatic/db/3.0.0.json',
    ...config,
  });
  await app.init();
  address = new URL(await app.start({ listen: true }));
  close = () => app.stop();
} else {
  const { default: platformaticDb } = await import('@platformatic/db');
  const app = await platformaticDb.buildServer(config);
  await app.start();
  address = new URL(`http://127.0.0.1:${app.server.address().port}`);
  close = () => app.close();
}
process.stdout.write(`LISTENING ${address.port}\n`);
const stop = () => void close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
