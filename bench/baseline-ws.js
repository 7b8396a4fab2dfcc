// Baseline of the storm benchmark: a bare `ws` server that verifies the bearer token of the upgrade
// (jose, the same JWKS key, issuer and audience), and on `service/register` checks the sid and upserts
// the row into the same runtime_instance table with the controller's statement. Nothing else.
import { randomUUID, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import pg from 'pg';
import { WebSocketServer } from 'ws';
// The controller's own statement, from the build `npm run bench` makes first.
import { REGISTER_INSTANCE as UPSERT } from '../dist/libs/database/repositories/runtime-instance.repository.js';

const jwks = createLocalJWKSet(JSON.parse(readFileSync(process.env.JWT_JWKS_FILE, 'utf8')));
const options = { issuer: process.env.JWT_ISSUER, audience: process.env.JWT_AUDIENCE, algorithms: ['ES256'] };
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
const controllerId = randomUUID();

const server = createServer((_, res) => res.writeHead(404).end());
const claimsOf = new WeakMap();
const wss = new WebSocketServer({
  server,
  path: '/ws/microservice',
  maxPayload: 64 * 1024,
  verifyClient: (info, accept) => {
    const token = /^Bearer (\S+)$/.exec(info.req.headers.authorization ?? '')?.[1];
    if (token === undefined) return accept(false, 401);
    jwtVerify(token, jwks, options).then(
      ({ payload }) => {
        claimsOf.set(info.req, payload);
        accept(true);
      },
      () => accept(false, 401),
    );
  },
});

wss.on('connection', (socket, request) => {
  const claims = claimsOf.get(request);
  const connectionId = randomUUID();
  socket.on('message', async (data) => {
    const { id, params } = JSON.parse(data.toString());
    if (claims.sid !== params.serviceId) {
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32003, message: 'sid mismatch' } }));
      return;
    }
    const { rows } = await pool.query(UPSERT, [
      randomBytes(16).toString('base64url'),
      process.env.CONTROLLER_HOST_ID,
      params.serviceId,
      params.envTag ?? null,
      params.version ?? null,
      params.protocol ?? null,
      params.address ?? null,
      params.port ?? null,
      JSON.stringify(params.tags ?? {}),
      controllerId,
      connectionId,
    ]);
    const result = { runtimeInstanceId: rows[0].runtime_instance_id, status: 'registered' };
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, result }));
  });
});

server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`));
const stop = () => {
  for (const client of wss.clients) client.terminate();
  wss.close();
  server.close();
  void pool.end().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
