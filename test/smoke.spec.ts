import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi, type TestApi } from './support/api.js';
import { callers } from './support/tokens.js';

describe('smoke', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('creates a tag', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/tags',
      headers: { authorization: `Bearer ${await callers.admin()}` },
      payload: { tagName: 'smoke' },
    });
    expect(res.statusCode).toBe(201);
    const live = await api.app.inject({ method: 'GET', url: '/health/ready' });
    expect(live.json()).toEqual({ status: 'ok', database: 'up' });
  });
});
