import { describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import {
  changesOf,
  instanceIdOf,
  registryForFile,
  RpcClient,
  type RpcResponse,
  waitFor,
} from '../support/controller.js';
import { callers, token } from '../support/tokens.js';
import { JsonRpcParams } from '../../apps/controller/jsonrpc/jsonrpc-validation.pipe.js';
import { RegisterParams } from '../../apps/controller/registry/dto/register.params.js';
import { UpdateMetadataParams } from '../../apps/controller/registry/dto/update-metadata.params.js';

/**
 * Tag keys named `__proto__`, `constructor` or `prototype` are the runtime's data like any other: Nest's
 * validation pipe deletes such keys at any depth (against prototype pollution), so `tags` is kept as sent
 * and still checked in full by its rule (docs/decisions.md). Maps are built with JSON.parse: in an object
 * literal `__proto__` would set the prototype instead of a key.
 */
const registry = registryForFile();

const tagsOf = (json: string): Record<string, unknown> => JSON.parse(json) as Record<string, unknown>;
/** Own entries in a stable order (jsonb stores keys in its own order). */
const entries = (value: unknown): [string, unknown][] =>
  Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const REGISTERED = '{"__proto__":"p","constructor":"c","prototype":"t","zone":"a"}';
const UPDATED = '{"__proto__":"p2","constructor":"c2","prototype":"t2","zone":"b"}';

async function runtime(serviceId: string): Promise<RpcClient> {
  return RpcClient.connect(registry.controller.wsUrl, {
    token: await token({ sub: 'rt', sid: serviceId, host: registry.controller.hostId }),
  });
}

function fieldsOf(response: RpcResponse): string[] {
  expect(response.error).toMatchObject({ code: -32602, message: 'Invalid params', data: { status: 400 } });
  const errors = response.error?.data?.errors as { field: string }[];
  return [...new Set(errors.map((e) => e.field))].sort();
}

async function listedTags(serviceId: string): Promise<unknown[]> {
  const answer = await fetch(
    `${registry.controller.httpUrl}/instances?hostId=${registry.controller.hostId}&serviceId=${serviceId}`,
    {
      headers: { authorization: `Bearer ${await callers.admin()}` },
    },
  );
  expect(answer.status).toBe(200);
  const page = (await answer.json()) as { instances: { tags: unknown }[] };
  return page.instances.map((instance) => entries(instance.tags));
}

describe('tags with keys named __proto__, constructor, prototype', () => {
  it('register and update_metadata keep them: the row, lookups, discovery/changed and /instances show every key', async () => {
    const serviceId = unique('proto-tags');
    const watcher = await runtime(serviceId);
    const subscriptionId = (await watcher.call('discovery/subscribe', { serviceId })).result?.subscriptionId as string;
    const client = await runtime(serviceId);
    // A top-level param of such a name is an unknown param like any other: dropped, not refused.
    const registered = await client.call('service/register', {
      ...JSON.parse('{"constructor":"x","prototype":"y"}'),
      serviceId,
      address: '10.7.7.7',
      port: 7000,
      tags: tagsOf(REGISTERED),
    });
    const id = instanceIdOf(registered);
    const expected = entries(tagsOf(REGISTERED));
    expect(expected).toHaveLength(4);
    expect(entries((await registry.table.byId(id))?.tags)).toEqual(expected);
    const lookup = await client.call('discovery/lookup', { serviceId });
    expect((lookup.result?.nodes as { tags: unknown }[]).map((node) => entries(node.tags))).toEqual([expected]);
    await waitFor(() => changesOf(watcher, subscriptionId).length === 1, 'discovery/changed for the registration');
    const changed = changesOf(watcher, subscriptionId)[0]?.nodes as { tags: unknown }[];
    expect(changed.map((node) => entries(node.tags))).toEqual([expected]);
    expect(await listedTags(serviceId)).toEqual([expected]);

    const updated = await client.call('service/update_metadata', { tags: tagsOf(UPDATED) });
    expect(updated.result).toEqual({ runtimeInstanceIds: [id], status: 'updated' });
    const expectedNow = entries(tagsOf(UPDATED));
    expect(entries((await registry.table.byId(id))?.tags)).toEqual(expectedNow);
    const relooked = await client.call('discovery/lookup', { serviceId });
    expect((relooked.result?.nodes as { tags: unknown }[]).map((node) => entries(node.tags))).toEqual([expectedNow]);
    await waitFor(() => changesOf(watcher, subscriptionId).length === 2, 'discovery/changed for the update');
    const rechanged = changesOf(watcher, subscriptionId)[1]?.nodes as { tags: unknown }[];
    expect(rechanged.map((node) => entries(node.tags))).toEqual([expectedNow]);
    expect(await listedTags(serviceId)).toEqual([expectedNow]);
    await Promise.all([client.close(), watcher.close()]);
    await registry.controller.quiesce();
  });

  it('such a key still obeys the tags rule: a value that is not a string is -32602 naming tags, nothing stored', async () => {
    const serviceId = unique('proto-bad');
    const client = await runtime(serviceId);
    for (const bad of ['{"constructor":5,"zone":"a"}', '{"__proto__":{"zone":"a"}}', '{"prototype":"\\u0000"}']) {
      const refused = await client.call('service/register', { serviceId, tags: tagsOf(bad) });
      expect(fieldsOf(refused)).toEqual(['tags']);
      // Every failing field is named, not only those outside the map.
      const both = await client.call('service/register', { serviceId, port: 'x', tags: tagsOf(bad) });
      expect(fieldsOf(both)).toEqual(['port', 'tags']);
    }
    expect(await registry.table.byService(serviceId)).toEqual([]);

    const id = instanceIdOf(await client.call('service/register', { serviceId, tags: { zone: 'a' } }));
    const update = await client.call('service/update_metadata', { tags: tagsOf('{"constructor":5}') });
    expect(fieldsOf(update)).toEqual(['tags']);
    expect((await registry.table.byId(id))?.tags).toEqual({ zone: 'a' });
    await client.close();
    await registry.controller.quiesce();
  });

  it('those keys count towards the 100 entries: 101 with them is -32602, 100 is stored whole', async () => {
    const serviceId = unique('proto-many');
    const client = await runtime(serviceId);
    const map = (normal: number): Record<string, unknown> => {
      const tags = tagsOf('{"__proto__":"p","constructor":"c","prototype":"t"}');
      for (let i = 0; i < normal; i += 1) tags[`k${i}`] = 'v';
      return tags;
    };
    expect(fieldsOf(await client.call('service/register', { serviceId, tags: map(98) }))).toEqual(['tags']);
    expect(await registry.table.byService(serviceId)).toEqual([]);
    const id = instanceIdOf(await client.call('service/register', { serviceId, tags: map(97) }));
    expect(entries((await registry.table.byId(id))?.tags)).toEqual(entries(map(97)));
    expect(fieldsOf(await client.call('service/update_metadata', { tags: map(98) }))).toEqual(['tags']);
    expect(entries((await registry.table.byId(id))?.tags)).toEqual(entries(map(97)));
    await client.close();
    await registry.controller.quiesce();
  });
});

describe('JsonRpcParams with such tag keys', () => {
  it("keeps the map exactly, leaves the caller's params whole and still drops a top-level key of such a name", async () => {
    for (const dto of [RegisterParams, UpdateMetadataParams]) {
      const text =
        '{"serviceId":"a","constructor":"x","tags":{"__proto__":"x","constructor":"y","prototype":"z","k":"v"}}';
      const params = JSON.parse(text) as Record<string, unknown>;
      const validated = (await new JsonRpcParams<object>(dto).transform(params)) as Record<string, unknown>;
      expect(entries(validated.tags)).toEqual(
        entries(tagsOf('{"__proto__":"x","constructor":"y","prototype":"z","k":"v"}')),
      );
      expect(Object.getPrototypeOf(validated.tags)).toBe(Object.prototype);
      expect(Object.hasOwn(validated, 'constructor')).toBe(false);
      expect(validated).toBeInstanceOf(dto);
      expect(JSON.stringify(params)).toBe(text);
    }
  });
});
