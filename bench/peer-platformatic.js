// The peer of the peer benchmark: @platformatic/db (REST over PostgreSQL on Fastify) serving the same
// `tag` table, with JWT authorization: the bench issuer's public key, ES256, issuer and audience checked,
// a role from the token's `roles` claim allowed to find and save tags.
import { readFileSync } from 'node:fs';
import platformaticDb from '@platformatic/db';

const ignore = Object.fromEntries(
  [
    'typeorm_migrations',
    'schema',
    'product',
    'document',
    'entity_tag',
    'config_layer',
    'config_property',
    'config_file',
    'runtime_instance',
  ].map((table) => [table, true]),
);

const app = await platformaticDb.buildServer({
  server: { hostname: '127.0.0.1', port: 0, logger: { level: 'warn' } },
  db: {
    connectionString: process.env.DATABASE_URL,
    poolSize: Number(process.env.POOL_SIZE ?? 10),
    graphql: false,
    openapi: true,
    ignore,
  },
  authorization: {
    roleKey: 'roles',
    jwt: {
      secret: { public: readFileSync(process.env.PUBLIC_KEY_FILE, 'utf8') },
      verify: { algorithms: ['ES256'], allowedIss: process.env.JWT_ISSUER, allowedAud: process.env.JWT_AUDIENCE },
    },
    rules: [{ role: 'tag-writer', entity: 'tag', find: true, save: true, delete: false }],
  },
});
await app.start();
process.stdout.write(`LISTENING ${app.server.address().port}\n`);
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
