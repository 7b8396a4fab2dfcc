import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import {
  ConfigHistoryRepository,
  ConfigKeyRepository,
  ConfigLayerRepository,
  ConfigStoreRepository,
  UnitOfWork,
  type JsonValue,
  type LayerAddress,
} from '#database';
import { ConfigVault } from '../../apps/api/config-server/encryption/config-vault.js';
import { LayerReader } from '../../apps/api/config-server/layer-reader.js';
import { LayerWriter } from '../../apps/api/config-server/layer-writer.js';
import { openDatabase } from '../support/database.js';
import { testConfigKeys } from '../support/key-ring.js';

/**
 * A sealed write diffs against the layer's current content; when this process wrote that version itself it
 * uses what it wrote instead of reading and decrypting it (DESIGN 17, bench config-history). These tests
 * hold that shortcut to the stored truth: two writers stand for two api replicas on one database.
 */
describe('a sealed write diffs against the current version, kept or read', () => {
  let db: DataSource;
  let work: UnitOfWork;
  let layers: ConfigLayerRepository;
  const author = { actor: 'test', reason: null };

  /** One api replica's writer, and the spy on its store's read of the current content. */
  function replica() {
    const store = new ConfigStoreRepository(db);
    const history = new ConfigHistoryRepository(db);
    const vault = new ConfigVault(testConfigKeys(), new ConfigKeyRepository(db));
    const reader = new LayerReader(store, history, vault);
    // `in(tx)` answers Object.create(store): the bound copies see the spy on this instance.
    const read = jest.spyOn(store, 'current');
    return { writer: new LayerWriter(layers, history, store, reader, vault, 1000), read };
  }

  class Aborted extends Error {}

  /** Replaces the layer's properties under its lock; `abort` rolls the transaction back after the write. */
  async function put(writer: LayerWriter, address: LayerAddress, properties: Record<string, JsonValue>, abort = false) {
    return work.run(async (tx) => {
      const { layerId, previous } = await layers.in(tx).upsertVersioned(address, author.actor);
      const written = await writer.write(tx, { layerId, address, previous }, [{ properties, mode: 'replace' }], author);
      if (abort) throw new Aborted();
      return written;
    });
  }

  const addressOf = (serviceId: string): LayerAddress => ({
    host: 'written-content',
    serviceId: `${serviceId}-${Date.now()}`,
    productId: null,
    productVersion: null,
    envTag: null,
  });

  beforeAll(async () => {
    db = await openDatabase();
    work = new UnitOfWork(db);
    layers = new ConfigLayerRepository(db);
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await db.destroy();
  });

  it('reads nothing for the version it wrote itself, and reads again once another replica wrote', async () => {
    const address = addressOf('two-replicas');
    const a = replica();
    const b = replica();
    await put(a.writer, address, { 'x.a': 1 });
    a.read.mockClear();
    const second = await put(a.writer, address, { 'x.a': 2 });
    expect(a.read).not.toHaveBeenCalled();
    expect(second.change).toEqual({ added: [], changed: ['x.a'], removed: [], sha256: {} });

    // Replica B holds nothing of this layer: it reads, and writes version 3.
    const third = await put(b.writer, address, { 'x.a': 3, 'x.b': 1 });
    expect(third.version).toBe(3);
    expect(third.change).toEqual({ added: ['x.b'], changed: ['x.a'], removed: [], sha256: {} });

    // A kept version 2, which is no longer current: it reads, and diffs against B's version.
    a.read.mockClear();
    const fourth = await put(a.writer, address, { 'x.a': 3, 'x.b': 2 });
    expect(a.read).toHaveBeenCalledTimes(1);
    expect(fourth.change).toEqual({ added: [], changed: ['x.b'], removed: [], sha256: {} });
  });

  it('keeps nothing of a write that rolled back, even when another replica then writes the same version', async () => {
    const address = addressOf('rolled-back');
    const a = replica();
    const b = replica();
    const first = await put(a.writer, address, { 'x.a': 'one' });
    await expect(put(a.writer, address, { 'x.a': 'never', 'x.gone': true }, true)).rejects.toBeInstanceOf(Aborted);
    // B writes version 2 for real, with other content than A's rolled-back version 2.
    const second = await put(b.writer, address, { 'x.a': 'two' });
    expect([first.version, second.version]).toEqual([1, 2]);

    const third = await put(a.writer, address, { 'x.a': 'two', 'x.c': 3 });
    expect(third.change).toEqual({ added: ['x.c'], changed: [], removed: [], sha256: {} });
    const stored = await db.query<{ n: number }[]>(
      `select count(*)::int as n from config_property p join config_layer l using (layer_id)
        where l.host = $1 and l.service_id = $2`,
      [address.host, address.serviceId],
    );
    expect(stored[0]?.n).toBe(2);
  });
});
