import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clientAddress } from '#platform';
import { call, startApi, type TestApi } from '../support/api.js';

const request = (forwarded: string | undefined): IncomingMessage =>
  ({
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    socket: { remoteAddress: '10.0.0.1' },
  }) as unknown as IncomingMessage;

describe('clientAddress (DESIGN 2: TRUST_PROXY)', () => {
  it.each([
    [false, undefined, '10.0.0.1'],
    [false, '203.0.113.7', '10.0.0.1'],
    [true, undefined, '10.0.0.1'],
    [true, '203.0.113.7', '203.0.113.7'],
    // Only the hop the trusted proxy appended counts; what the caller wrote before it does not.
    [true, '198.51.100.1, 203.0.113.7', '203.0.113.7'],
    [true, ' ', '10.0.0.1'],
  ] as const)('trustProxy=%s, X-Forwarded-For %j -> %s', (trust, forwarded, expected) => {
    expect(clientAddress(request(forwarded), trust)).toBe(expected);
  });
});

describe('TRUST_PROXY=true', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ TRUST_PROXY: 'true' });
  });
  afterAll(() => api.close());

  it('logs the forwarded address', async () => {
    const res = await call(api, 'GET', '/health/live', { headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' } });
    const id = res.headers['x-request-id'] as string;
    const line = api.logs.lines.find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect((line?.req as { remoteAddress?: string }).remoteAddress).toBe('203.0.113.7');
  });
});
