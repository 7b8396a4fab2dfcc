import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  afterCommit,
  compareKeys,
  ConfigHistoryRepository,
  ConfigStoreRepository,
  FILE_KINDS,
  fileValueName,
  type FileKind,
  type FilesByKind,
  type JsonValue,
  type LayerAddress,
  type LayerChange,
  type LayerVersionRecord,
  type Stored,
  type StoredFile,
  type Tx,
} from '#database';
import { ConfigVault } from './encryption/config-vault.js';

/** A file's content, opened, and the stored content it came from (null: a plaintext row, or not stored yet). */
export interface FileEntry {
  readonly bytes: Buffer;
  readonly contentId: string | null;
}

/** A layer's content, opened: what a write diffs against and what a rollback writes back. */
export interface LayerContent {
  readonly properties: ReadonlyMap<string, JsonValue>;
  readonly files: Readonly<Record<FileKind, ReadonlyMap<string, FileEntry>>>;
}

/** One version, opened: its record (a sealed version's file digests worked out), content and file hashes. */
export interface OpenedVersion {
  readonly record: LayerVersionRecord;
  readonly content: LayerContent;
  readonly sha256: FilesByKind<string>;
}

export const sha256Hex = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Layers whose last written content this process keeps for its next write (least recently written go first). */
const WRITTEN_LAYERS = 1_000;

/** A layer's content as a sealed write of this process left it. */
interface WrittenContent {
  readonly version: number;
  readonly properties: ReadonlyMap<string, JsonValue>;
  readonly files: StoredFiles;
}

const emptyFiles = (): Record<FileKind, Map<string, FileEntry>> => ({ cert: new Map(), file: new Map() });

/** SHA-256 by name of each file, by kind. */
function hashes(files: LayerContent['files']): FilesByKind<string> {
  const of = (kind: FileKind) => Object.fromEntries([...files[kind]].map(([name, f]) => [name, sha256Hex(f.bytes)]));
  return { cert: of('cert'), file: of('file') };
}

/** The change with the SHA-256 of each added or changed file (a sealed version stores none, DESIGN 17). */
function withDigests(change: LayerChange, sha256: FilesByKind<string>): LayerChange {
  const digests: Record<string, string> = {};
  for (const name of [...change.added, ...change.changed]) {
    const [kind, file] = [name.slice(0, name.indexOf('/')), name.slice(name.indexOf('/') + 1)];
    // Own keys only: a file named `__proto__` must not find the object's prototype.
    const hash =
      (kind === 'cert' || kind === 'file') && Object.hasOwn(sha256[kind], file) ? sha256[kind][file] : undefined;
    if (hash !== undefined) digests[name] = hash;
  }
  return { ...change, sha256: digests };
}

/**
 * Reads layers and their versions as stored, plaintext or sealed, and opens them (DESIGN 17): the current
 * content for a write's diff and the admin reads, a version for history and rollback.
 */
@Injectable()
export class LayerReader {
  private readonly written = new Map<string, WrittenContent>();

  constructor(
    private readonly store: ConfigStoreRepository,
    private readonly history: ConfigHistoryRepository,
    private readonly vault: ConfigVault,
  ) {}

  /** The layer's properties, opened, in key order. */
  async properties(layer: LayerRef, tx?: Tx): Promise<Map<string, JsonValue>> {
    const stored = await this.bound(this.store, tx).properties(layer.layerId, layer.address);
    return new Map(await this.vault.openJson([...stored]));
  }

  /**
   * The layer's files: those of `kinds` opened; of the other kinds, the stored content ids (and a plaintext
   * row's bytes), unopened.
   */
  async files(layer: LayerRef, kinds: readonly FileKind[], tx?: Tx): Promise<StoredFiles> {
    return this.openFiles(await this.bound(this.store, tx).files(layer.layerId, layer.address, kinds));
  }

  /**
   * `properties` and `files` read in one statement, in the writer's transaction; or, when no file is to be
   * opened and this process wrote `version` of the layer itself, what it wrote then (no read, no decryption).
   */
  async current(
    layer: LayerRef,
    kinds: readonly FileKind[],
    tx: Tx,
    version?: number,
  ): Promise<{ properties: Map<string, JsonValue>; files: StoredFiles }> {
    const written = this.written.get(layer.layerId);
    if (kinds.length === 0 && written !== undefined && written.version === version) {
      return {
        properties: new Map(written.properties),
        files: { cert: new Map(written.files.cert), file: new Map(written.files.file) },
      };
    }
    const stored = await this.store.in(tx).current(layer.layerId, layer.address, kinds);
    const [properties, files] = await Promise.all([
      this.vault.openJson([...stored.properties]),
      this.openFiles(stored.files),
    ]);
    return { properties: new Map(properties), files };
  }

  /**
   * Keeps what a sealed write made version `version` of the layer, once `tx` commits (a version that rolled
   * back is never kept): properties and file references, no file bytes. A version's content never changes
   * (rewrap changes keys only), and any other write moves the layer on, so a kept version is current exactly
   * when the layer's lock answers it.
   */
  remember(tx: Tx, layerId: string, version: number, properties: ReadonlyMap<string, JsonValue>, files: StoredFiles) {
    const references = (kind: FileKind) =>
      new Map([...files[kind]].map(([name, f]) => [name, { bytes: undefined, contentId: f.contentId }] as const));
    // A file not stored yet (plaintext) has no reference to keep: the next write reads the layer.
    if (FILE_KINDS.some((kind) => [...files[kind].values()].some((f) => f.contentId === null))) return;
    const kept = { version, properties, files: { cert: references('cert'), file: references('file') } };
    afterCommit(tx, () => {
      this.written.delete(layerId);
      if (this.written.size >= WRITTEN_LAYERS) this.written.delete(this.written.keys().next().value ?? '');
      this.written.set(layerId, kept);
    });
  }

  private async openFiles(rows: readonly StoredFile[]): Promise<StoredFiles> {
    const loaded = rows.filter((r) => r.value !== undefined) as { value: Stored<Buffer> }[];
    const opened = await this.vault.openBytes(loaded.map((r, i) => [String(i), r.value] as const));
    const bytes = new Map(loaded.map((r, i) => [r, opened[i]?.[1]] as const));
    const files: StoredFiles = { cert: new Map(), file: new Map() };
    for (const row of rows) {
      files[row.kind].set(row.name, { bytes: bytes.get(row as { value: Stored<Buffer> }), contentId: row.contentId });
    }
    return files;
  }

  /** Version `version` of the layer, opened; null when it never existed or was pruned. */
  async version(layer: LayerRef, version: number, tx?: Tx): Promise<OpenedVersion | null> {
    const stored = await this.bound(this.history, tx).storedVersion(layer.layerId, version, true);
    if (stored === null) return null;
    const { content: raw, ...record } = stored;
    if (raw.form === 'plain') {
      const files = emptyFiles();
      for (const kind of FILE_KINDS) {
        for (const [name, b64] of Object.entries(raw.fileContents?.[kind] ?? {})) {
          files[kind].set(name, { bytes: Buffer.from(b64, 'base64'), contentId: null });
        }
      }
      const content = { properties: new Map(Object.entries(raw.properties)), files };
      return { record, content, sha256: raw.files };
    }
    const entries = Object.entries(raw.sealedProperties).map(
      ([name, b64]) =>
        [name, { sealed: Buffer.from(b64, 'base64'), dataKeyId: raw.dataKeyId, address: layer.address, name }] as const,
    );
    const properties = new Map((await this.vault.openJson(entries)).sort(([a], [b]) => compareKeys(a, b)));
    const files = await this.openRefs(layer, raw.fileRefs, tx);
    const sha256 = hashes(files);
    return {
      record: { ...record, change: withDigests(record.change, sha256) },
      content: { properties, files },
      sha256,
    };
  }

  /** The versions of a history page with each sealed version's file digests worked out (opening its files). */
  async withDigests(
    layer: LayerRef,
    versions: readonly (LayerVersionRecord & { fileRefs: FilesByKind<string> | null })[],
  ): Promise<LayerVersionRecord[]> {
    return Promise.all(
      versions.map(async ({ fileRefs, ...record }) => {
        if (fileRefs === null) return record;
        const named = [...record.change.added, ...record.change.changed].filter((n) => /^(cert|file)\//.test(n));
        if (named.length === 0) return record;
        // Only the files the change names (fromEntries: a file named `__proto__` stays a key).
        const only = (kind: FileKind) =>
          Object.fromEntries(
            named
              .filter((name) => name.startsWith(`${kind}/`) && Object.hasOwn(fileRefs[kind], name.slice(5)))
              .map((name) => [name.slice(5), fileRefs[kind][name.slice(5)]] as const),
          );
        const refs: Record<FileKind, Record<string, string>> = { cert: only('cert'), file: only('file') };
        return { ...record, change: withDigests(record.change, hashes(await this.openRefs(layer, refs))) };
      }),
    );
  }

  /** Opens the stored contents a version refers to. */
  private async openRefs(layer: LayerRef, refs: FilesByKind<string>, tx?: Tx): Promise<LayerContent['files']> {
    const named = FILE_KINDS.flatMap((kind) =>
      Object.entries(refs[kind]).map(([name, id]) => ({ kind, name, contentId: String(id) })),
    );
    const contents = await this.bound(this.store, tx).contents(named.map((n) => n.contentId));
    const stored = named.map((n) => {
      const content = contents.get(n.contentId);
      if (content === undefined) throw new Error(`stored content ${n.contentId} of a kept version is missing`);
      const name = fileValueName(n.kind, n.name);
      return [name, { sealed: content.sealed, dataKeyId: content.dataKeyId, address: layer.address, name }] as const;
    });
    const opened = await this.vault.openBytes(stored);
    const files = emptyFiles();
    named.forEach((n, i) =>
      files[n.kind].set(n.name, { bytes: opened[i]?.[1] ?? Buffer.alloc(0), contentId: n.contentId }),
    );
    return files;
  }

  private bound<R extends { in(tx: Tx): R }>(repository: R, tx: Tx | undefined): R {
    return tx === undefined ? repository : repository.in(tx);
  }
}

/** A layer's files by kind and name: opened bytes (undefined for a kind not asked for) and stored content. */
export type StoredFiles = Record<FileKind, Map<string, { bytes: Buffer | undefined; contentId: string | null }>>;

/** A layer by id, with the address its values are sealed for. */
export interface LayerRef {
  readonly layerId: string;
  readonly address: LayerAddress;
}
