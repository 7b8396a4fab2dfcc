import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { ConfigLayerRepository, sameJson, UnitOfWork, type JsonValue } from '#database';
import { historyRepository, recordLayerChange, unlessUnchanged } from '../../apps/api/config-server/layer-history.js';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { assertProperty } from '../support/property.js';
import { token } from '../support/tokens.js';

/**
 * The admin properties write works out its version's diff in the api (ConfigHistoryRepository
 * .replaceProperties); every other writer has the database diff the versions (config_layer_append_version).
 * Differential: the same two writes through both must record the same names, jsonb equality included
 * (objects equal whatever their key order, numbers by value).
 */
const RUNS = 60;
let api: TestApi;
let db: DataSource;
let alice: string;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  alice = await token({ sub: 'alice', scope: 'portal.admin' });
});
afterAll(() => api.close());

type Properties = Record<string, JsonValue>;
const KEYS = ['a.x', 'a.y', 'b.z', 'c.w', 'd.v'];

const leaf = fc.oneof(
  fc.string({ maxLength: 4 }).filter((s) => !s.includes('\u0000')),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ min: -4, max: 4, noNaN: true }),
  fc.boolean(),
);
const inner = fc.oneof(leaf, fc.constant(null));
const value: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 3, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(inner, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('k', 'l', 'm'), inner, { maxKeys: 3 }) },
);
const properties = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: KEYS.length });

/** The same value with every object's keys in reverse order: equal as jsonb, different as text. */
function reordered(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(reordered);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reordered(x)]),
  );
}

/** `after` built from `before`: each key kept (maybe reordered), replaced, dropped; new keys from `extra`. */
const scenario = fc
  .tuple(properties, properties, fc.array(fc.constantFrom('keep', 'reorder', 'replace', 'drop'), { minLength: 5 }))
  .map(([before, extra, fates]) => {
    const after: Properties = { ...extra };
    Object.entries(before).forEach(([key, v], i) => {
      const fate = fates[i % fates.length];
      if (fate === 'keep') after[key] = v;
      else if (fate === 'reorder') after[key] = reordered(v);
      else if (fate === 'drop') delete after[key];
    });
    return { before, after };
  });

async function lastChange(query: string): Promise<unknown> {
  const res = await call(api, 'GET', `/config-server/admin/history?${query}&limit=1`, { token: alice });
  expect(res.statusCode).toBe(200);
  return res.json<{ versions: { change: unknown }[] }>().versions[0]?.change;
}

describe('properties replace diff (property, differential against the database diff)', () => {
  it('sameJson is jsonb equality on the values the tests build', () => {
    expect(sameJson({ k: 1, l: [1, null] }, { l: [1, null], k: 1 })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ k: 1 }, { k: 1, l: null })).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
    expect(sameJson(-0, 0)).toBe(true);
  });

  it('records the names the generic append records, for any two writes', async () => {
    const layers = new ConfigLayerRepository(db);
    const work = new UnitOfWork(db);
    await assertProperty(
      'properties replace diff',
      fc.asyncProperty(scenario, async ({ before, after }) => {
        const host = unique('pd');
        // Through the api: PUT twice.
        for (const body of [before, after]) {
          const res = await call(api, 'PUT', `/config-server/admin/properties?host=${host}&serviceId=api`, {
            token: alice,
            body: { properties: body },
          });
          expect(res.statusCode).toBe(200);
        }
        // The generic path: replace the rows, then let the database diff the versions.
        const address = { host, serviceId: 'sql', productId: null, productVersion: null, envTag: null };
        for (const body of [before, after]) {
          // A write that changes nothing appends no version on either path (DESIGN 14).
          await unlessUnchanged(
            work.run(async (tx) => {
              const layerId = await layers.in(tx).upsert(address, 'alice');
              await layers.in(tx).writeProperties(layerId, body, 'replace');
              await recordLayerChange(historyRepository(db), tx, layerId, { actor: 'alice', reason: null });
            }),
            () => undefined,
          );
        }
        expect(await lastChange(`host=${host}&serviceId=api`)).toEqual(await lastChange(`host=${host}&serviceId=sql`));
      }),
      RUNS,
    );
  });
});
