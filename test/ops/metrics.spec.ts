import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

it('GET /metrics counts requests by route template and status, with latency and process metrics', async () => {
  const admin = await callers.admin();
  await call(api, 'GET', '/tags/NoSuchTagA', { token: admin });
  await call(api, 'GET', '/tags/NoSuchTagB', { token: admin });
  await call(api, 'GET', '/tags');
  const res = await call(api, 'GET', '/metrics');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.body).toContain('bindery_http_requests_total{method="GET",route="/tags/:tagId",status="404"} 2');
  expect(res.body).toContain('bindery_http_requests_total{method="GET",route="/tags",status="401"} 1');
  // Both requests in the histogram, whatever they took (a busy machine may push one past any bucket).
  expect(res.body).toMatch(
    /bindery_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/tags\/:tagId",status="404"\} 2/,
  );
  expect(res.body).toContain(
    'bindery_http_request_duration_seconds_count{method="GET",route="/tags/:tagId",status="404"} 2',
  );
  expect(res.body).toContain('process_resident_memory_bytes');
  expect(res.body).toContain('# TYPE bindery_binding_rejections_total counter');
});
