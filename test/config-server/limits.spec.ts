import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigLayerRepository } from '#database';
import { startApi, unique, type TestApi } from '../support/api.js';
import { bearer, expectProblem, putFiles, send, signed } from './support.js';

// DESIGN 3 (nothing unbounded): one certs/files answer carries at most 4 MiB of file content.
describe('a files answer larger than the documented limit is refused, not built', () => {
  let api: TestApi;
  const host = unique('lim-host');
  const sid = unique('lim-svc');
  const runtime = (): Promise<string> => signed({ sub: 'rt', scope: 'portal.r', host, sid });

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('answers within the limit, and refuses with a problem naming the size beyond it', async () => {
    await putFiles(api, { host, serviceId: sid }, 'file', { 'small.bin': randomBytes(1000) });
    const small = await send(api, 'GET', '/config-server/files', {
      query: { host, serviceId: sid },
      authorization: bearer(await runtime()),
    });
    expect(small.res.statusCode).toBe(200);
    expect(Object.keys(small.res.json())).toEqual(['small.bin']);

    // The admin API's body limit keeps each write under 1 MiB; the import command has no such limit.
    const layers = api.app.get(ConfigLayerRepository);
    const big = (envTag: string | null) =>
      layers
        .upsert({ host, serviceId: sid, productId: null, productVersion: null, envTag }, 'test')
        .then((id) =>
          layers.writeFiles(id, 'file', new Map([[`big-${envTag ?? 'all'}.bin`, randomBytes(2_200_000)]]), 'replace'),
        );
    await big('prod');
    await big(null);
    const refused = await send(api, 'GET', '/config-server/files', {
      query: { host, serviceId: sid, envTag: 'prod' },
      authorization: bearer(await signed({ sub: 'rt', scope: 'portal.r', host, sid, env: 'prod' })),
    });
    const problem = expectProblem(refused, 500);
    expect(problem.detail).toMatch(/4400000 bytes, over the 4194304-byte limit/);
    expect(refused.res.body.length).toBeLessThan(1000);
  });
});
