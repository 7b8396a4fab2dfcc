import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ConfigLayerRepository } from '#database';
import { startApi, unique, type TestApi } from '../support/api.js';
import { bearer, putProperties, send, signed } from './support.js';

/**
 * A runtime read keeps the merge it opened, by address and layer versions; while those versions are current
 * a read fetches no value (MERGED_PROPERTIES answers one row) and decrypts nothing. Two apis stand for two
 * replicas: a write through either is seen by both on their next read.
 */
describe('the opened merge of a runtime read', () => {
  let first: TestApi;
  let second: TestApi;

  beforeAll(async () => {
    [first, second] = [await startApi(), await startApi()];
    await first.app.get(DataSource).query('update config_encryption set encrypted_writes = true');
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  async function read(api: TestApi, host: string) {
    const jwt = await signed({ sub: 'rt', scope: 'portal.r', host, sid: 'svc', env: 'prod' });
    const query = { host, serviceId: 'svc', envTag: 'prod', productId: 'prd', productVersion: '1' };
    const { res } = await send(api, 'GET', '/config-server/configs', { query, authorization: bearer(jwt) });
    expect(res.statusCode).toBe(200);
    return JSON.parse(res.body) as Record<string, unknown>;
  }

  it('reads no value while the versions are current, and every change made through either replica', async () => {
    const host = unique('merge');
    await putProperties(first, { host, productId: 'prd', productVersion: '1' }, { 'a.x': 'product', 'a.y': 1 });
    await putProperties(first, { host, serviceId: 'svc', envTag: 'prod' }, { 'a.x': 'service+env' });
    expect(await read(first, host)).toEqual({ 'a.x': 'service+env', 'a.y': 1 });

    const merged = jest.spyOn(first.app.get(ConfigLayerRepository), 'mergedProperties');
    expect(await read(first, host)).toEqual({ 'a.x': 'service+env', 'a.y': 1 });
    const [again] = await Promise.all(merged.mock.results.map((r) => r.value));
    expect(again).toEqual({ values: undefined, versions: expect.stringMatching(/^0:\d+,3:\d+$/) });

    // A lower layer changed through the other replica: the first one's next read has the new value.
    await putProperties(second, { host, productId: 'prd', productVersion: '1' }, { 'a.x': 'product', 'a.y': 2 });
    expect(await read(first, host)).toEqual({ 'a.x': 'service+env', 'a.y': 2 });
    // The highest layer emptied: it no longer holds a property, and the product's value wins again.
    await putProperties(second, { host, serviceId: 'svc', envTag: 'prod' }, {});
    expect(await read(first, host)).toEqual({ 'a.x': 'product', 'a.y': 2 });
    expect(await read(second, host)).toEqual({ 'a.x': 'product', 'a.y': 2 });
    merged.mockRestore();
  });

  it('answers the versions row alone when the caller holds them, and every value otherwise', async () => {
    const host = unique('merge-sql');
    await putProperties(first, { host, serviceId: 'svc' }, { 'b.one': 1, 'b.two': 'two' });
    const layers = first.app.get(ConfigLayerRepository);
    const address = { host, serviceId: 'svc', productId: null, productVersion: null, envTag: null };
    const all = await layers.mergedProperties(address);
    expect([...(all.values?.keys() ?? [])]).toEqual(['b.one', 'b.two']);
    expect(await layers.mergedProperties(address, all.versions)).toEqual({ values: undefined, versions: all.versions });
    const stale = await layers.mergedProperties(address, `${all.versions}0`);
    expect(stale.versions).toBe(all.versions);
    expect(stale.values?.size).toBe(2);
    const none = { ...address, serviceId: 'nothing-here' };
    expect(await layers.mergedProperties(none)).toEqual({ values: new Map(), versions: '' });
  });
});
