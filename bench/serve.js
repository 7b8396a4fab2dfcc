// The bare Fastify + pg baselines' shared tail: listen on a free loopback port, print `LISTENING <port>`
// (what startBenchServer waits for), and close the server and its pool on SIGTERM or SIGINT.
export async function serve(app, pool) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`LISTENING ${app.server.address().port}\n`);
  const stop = () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
