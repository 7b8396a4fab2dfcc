// The baselines' shared tail: print `LISTENING <port>` (what startBenchServer waits for), and close the
// server, then its pool, on SIGTERM or SIGINT.
export function announce(port, close) {
  process.stdout.write(`LISTENING ${port}\n`);
  const stop = () => void close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** For the bare Fastify + pg baselines: listen on a free loopback port, then `announce`. */
export async function serve(app, pool) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  announce(app.server.address().port, () => app.close().then(() => pool.end()));
}
