import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  ConfigHistoryRepository,
  ConfigKeyRepository,
  ConfigLayerRepository,
  ConfigStoreRepository,
  FILE_KINDS,
  fileValueName,
  UnitOfWork,
  type FileKind,
  type LayerAddress,
  type Tx,
} from '#database';
import { LayerReader } from '../layer-reader.js';
import type { ConfigKeys } from './config-keys.js';
import { ConfigVault, type FreshKey } from './config-vault.js';
import { KeyRingError } from './errors.js';

/** Layers looked up per round; each is converted in a transaction of its own. */
const LAYERS_PER_ROUND = 50;

export interface EncryptExistingSummary {
  readonly layers: number;
  readonly versions: number;
}

/**
 * `npm run keys:encrypt-existing` (DESIGN 17): turns encrypted writes on, waiting for writers that read the
 * switch off, then seals every plaintext layer and version, one layer per transaction under its row lock.
 * Idempotent and resumable: a sealed row is never touched again. No new version, no ETag change, no push.
 */
export async function encryptExisting(
  dataSource: DataSource,
  keys: ConfigKeys,
  progress: (layer: LayerAddress, versions: number) => void = () => {},
): Promise<EncryptExistingSummary> {
  if (keys.ring === null) throw new KeyRingError('no key ring (CONFIG_KEYRING_FILE): nothing to encrypt with');
  const work = new UnitOfWork(dataSource);
  const dataKeys = new ConfigKeyRepository(dataSource);
  await work.run((tx) => dataKeys.in(tx).enableEncryptedWrites());
  const sealer = new LayerSealer(dataSource, new ConfigVault(keys, dataKeys));
  const done = new Set<string>();
  let versions = 0;
  for (;;) {
    const layers = await sealer.store.layersWithPlaintext(LAYERS_PER_ROUND);
    if (layers.length === 0) {
      if (done.size > 0) await dataKeys.analyzeSealedTables();
      return { layers: done.size, versions };
    }
    for (const layer of layers) {
      // Each layer leaves no plaintext behind: seeing it again would loop for ever.
      if (done.has(layer.layerId)) throw new Error(`layer ${layer.layerId} still has plaintext after sealing`);
      done.add(layer.layerId);
      const sealed = await work.run((tx) => sealer.seal(tx, layer));
      versions += sealed;
      progress(layer.address, sealed);
    }
  }
}

/** Seals one layer's plaintext rows and versions in place. */
class LayerSealer {
  readonly store: ConfigStoreRepository;
  private readonly history: ConfigHistoryRepository;
  private readonly layers: ConfigLayerRepository;
  private readonly reader: LayerReader;

  constructor(
    dataSource: DataSource,
    private readonly vault: ConfigVault,
  ) {
    this.store = new ConfigStoreRepository(dataSource);
    this.history = new ConfigHistoryRepository(dataSource);
    this.layers = new ConfigLayerRepository(dataSource);
    this.reader = new LayerReader(this.store, this.history, vault);
  }

  /** Answers how many versions it sealed. */
  async seal(tx: Tx, layer: { layerId: string; address: LayerAddress }): Promise<number> {
    const { layerId, address } = layer;
    // The layer's row lock: writers of this layer wait, and nobody writes plaintext meanwhile (the switch is on).
    await this.layers.in(tx).find(address, true);
    // A content stored here once per name and bytes, shared by the versions and current files that hold it.
    const stored = new Map<string, string>();
    const contentOf = async (kind: FileKind, name: string, bytes: Buffer): Promise<string> => {
      const label = fileValueName(kind, name);
      const id = `${label}\u0000${createHash('sha256').update(bytes).digest('hex')}`;
      const known = stored.get(id);
      if (known !== undefined) return known;
      const key = await this.oneKey(tx);
      const sealed = this.vault.sealContent(key, { address, name: label }, bytes);
      const [contentId] = await this.store
        .in(tx)
        .insertContents(layerId, [{ dataKeyId: key.dataKeyId, sealed, size: bytes.length }]);
      if (contentId === undefined) throw new Error('a stored content has no id');
      stored.set(id, contentId);
      return contentId;
    };

    const versions = await this.history.in(tx).plaintextVersions(layerId);
    const sealed = [];
    for (const version of versions) {
      const key = await this.oneKey(tx);
      const sealedProperties = Object.fromEntries(
        Object.entries(version.properties).map(([name, value]) => [
          name,
          this.vault.sealProperty(key, { address, name }, value).toString('base64'),
        ]),
      );
      const fileRefs: Record<FileKind, Record<string, string>> = { cert: {}, file: {} };
      for (const kind of FILE_KINDS) {
        const refs: [string, string][] = [];
        for (const [name, b64] of Object.entries(version.fileContents[kind])) {
          refs.push([name, await contentOf(kind, name, Buffer.from(b64, 'base64'))]);
        }
        // fromEntries: a file named `__proto__` stays a key (an assignment would set the prototype instead).
        fileRefs[kind] = Object.fromEntries(refs);
      }
      sealed.push({ version: version.version, dataKeyId: key.dataKeyId, sealedProperties, fileRefs });
    }
    await this.history.in(tx).sealVersions(layerId, sealed);

    // The current rows: properties sealed under a key of their own, plaintext files stored as contents.
    const properties = await this.store.in(tx).properties(layerId, address);
    if ([...properties.values()].some((p) => 'plain' in p)) {
      const opened = await this.vault.openJson([...properties]);
      const key = await this.oneKey(tx);
      const entries = opened.map(
        ([name, value]) => [name, this.vault.sealProperty(key, { address, name }, value)] as const,
      );
      await this.store.in(tx).replaceSealedProperties(layerId, key.dataKeyId, entries);
    }
    const files = await this.reader.files(layer, FILE_KINDS, tx);
    for (const kind of FILE_KINDS) {
      if (![...files[kind].values()].some((f) => f.contentId === null)) continue;
      const refs = [];
      for (const [name, f] of files[kind]) {
        refs.push({ kind, name, contentId: f.contentId ?? (await contentOf(kind, name, f.bytes ?? Buffer.alloc(0))) });
      }
      await this.store.in(tx).replaceFileRefs(layerId, [kind], refs);
    }
    return sealed.length;
  }

  private async oneKey(tx: Tx): Promise<FreshKey> {
    const [key] = await this.vault.newKeys(tx, 1);
    if (key === undefined) throw new Error('no data key was made');
    return key;
  }
}
