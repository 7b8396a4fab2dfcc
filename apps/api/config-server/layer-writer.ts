import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  compareKeys,
  ConfigHistoryRepository,
  ConfigKeyRepository,
  ConfigLayerRepository,
  ConfigStoreRepository,
  FILE_KINDS,
  fileValueName,
  propertyChange,
  sortedRecord,
  type FileKind,
  type JsonValue,
  type LayerChange,
  type Tx,
  type WriteMode,
} from '#database';
import type { ConfigKeys } from './encryption/config-keys.js';
import { ConfigVault } from './encryption/config-vault.js';
import { recordLayerChange, replacePropertiesRecorded, UnchangedLayer, type ChangeAuthor } from './layer-history.js';
import { LayerReader, sha256Hex, type FileEntry, type LayerContent, type LayerRef } from './layer-reader.js';

/** One part of a write: a layer's properties, one kind of its files, or a whole version's content. */
export type LayerEdit =
  | { readonly properties: Readonly<Record<string, JsonValue>>; readonly mode: WriteMode }
  | { readonly kind: FileKind; readonly files: ReadonlyMap<string, Buffer>; readonly mode: WriteMode }
  | { readonly restore: LayerContent };

/** A layer being written: locked by the caller, with the version it had before (0: just created). */
export interface WritableLayer extends LayerRef {
  readonly previous: number;
}

/** A version just written, with the layer's properties and (when the write touched them) files now. */
export interface WrittenVersion {
  readonly version: number;
  readonly at: Date;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly change: LayerChange;
  readonly properties: Record<string, JsonValue>;
  /** Name to content by kind, when the write touched files. */
  readonly files?: Readonly<Record<FileKind, ReadonlyMap<string, Buffer>>>;
  /** Settles once the controllers were told (after the commit). */
  readonly announced: Promise<void>;
}

type Files = Record<FileKind, Map<string, { bytes: Buffer | undefined; contentId: string | null }>>;

const touchesFiles = (edits: readonly LayerEdit[]): boolean => edits.some((e) => !('properties' in e));

/** The file kinds `edits` write: one per files edit, both for a restore. */
const editedKinds = (edits: readonly LayerEdit[]): FileKind[] =>
  FILE_KINDS.filter((kind) => edits.some((e) => 'restore' in e || ('kind' in e && e.kind === kind)));

/** The names `next` added, changed and removed against `current`, files as `kind/name`, each sorted. */
function diff(current: Map<string, JsonValue>, currentFiles: Files, next: Map<string, JsonValue>, nextFiles: Files) {
  const { change } = propertyChange(current, Object.fromEntries(next));
  const added = [...change.added];
  const changed = [...change.changed];
  const removed = [...change.removed];
  const sha256: Record<string, string> = {};
  for (const kind of FILE_KINDS) {
    for (const [name, entry] of nextFiles[kind]) {
      const before = currentFiles[kind].get(name);
      const label = fileValueName(kind, name);
      if (before === undefined) added.push(label);
      else if (entry.contentId !== null && entry.contentId === before.contentId) continue;
      else if (entry.bytes !== undefined && before.bytes !== undefined && entry.bytes.equals(before.bytes)) continue;
      else changed.push(label);
      if (entry.bytes !== undefined) sha256[label] = sha256Hex(entry.bytes);
    }
    for (const name of currentFiles[kind].keys()) {
      if (!nextFiles[kind].has(name)) removed.push(fileValueName(kind, name));
    }
  }
  [added, changed, removed].forEach((names) => names.sort(compareKeys));
  return { change: { added, changed, removed, sha256 }, keys: [...added, ...changed, ...removed].sort(compareKeys) };
}

/** CONFIG_HISTORY_MAX_VERSIONS, the versions a layer keeps at most (DESIGN 14), for `LayerWriter`. */
export const HISTORY_MAX_VERSIONS = Symbol('HISTORY_MAX_VERSIONS');

/**
 * Every write of a layer's content (admin API, rollback, import, dev seed) ends here, in the caller's
 * transaction and under its row lock. With encrypted writes on (DESIGN 17) it diffs the new content
 * against the current one decrypted, seals every property under the version's new data key, stores each
 * new file content once under its own key and appends the version; otherwise it writes plaintext and the
 * database works out the version. A write that changes nothing throws `UnchangedLayer` (DESIGN 14).
 */
@Injectable()
export class LayerWriter {
  constructor(
    private readonly layers: ConfigLayerRepository,
    private readonly history: ConfigHistoryRepository,
    private readonly store: ConfigStoreRepository,
    private readonly reader: LayerReader,
    private readonly vault: ConfigVault,
    @Inject(HISTORY_MAX_VERSIONS) private readonly maxVersions: number,
  ) {}

  async write(tx: Tx, layer: WritableLayer, edits: readonly LayerEdit[], author: ChangeAuthor) {
    const sealing = await this.vault.sealing(tx);
    const written = sealing
      ? await this.writeSealed(tx, layer, edits, author)
      : await this.writePlain(tx, layer, edits, author);
    // The cap holds at every commit, not only after the hourly prune; versions are numbered without gaps.
    const beyond = written.version - this.maxVersions;
    if (beyond > 0) await this.history.in(tx).pruneUpTo(layer.layerId, beyond);
    return written;
  }

  private async writeSealed(
    tx: Tx,
    layer: WritableLayer,
    edits: readonly LayerEdit[],
    author: ChangeAuthor,
  ): Promise<WrittenVersion> {
    const { layerId, address } = layer;
    const withFiles = touchesFiles(edits);
    // Only the kinds this write changes are opened; the others keep their stored contents as they are.
    const { properties, files } = await this.reader.current(layer, editedKinds(edits), tx, layer.previous);
    const next = applyEdits(properties, files, edits);
    const { change, keys } = diff(properties, files, next.properties, next.files);
    // Creating a layer with nothing in it changes nothing either: no version, the row rolls back (W/"0").
    if (keys.length === 0) throw new UnchangedLayer(layer.previous);

    // Contents not stored yet: new or changed ones, and plaintext rows of a kind this write rewrites.
    const fresh = FILE_KINDS.flatMap((kind) =>
      [...next.files[kind]].filter(([, f]) => f.contentId === null).map(([name, f]) => ({ kind, name, f })),
    );
    const [versionKey, ...contentKeys] = this.vault.unstoredKeys(1 + fresh.length);
    if (versionKey === undefined) throw new Error('no data key was made');
    const stored = await this.store.in(tx).insertSealedContents(
      layerId,
      fresh.map(({ kind, name, f }, i) => {
        const key = contentKeys[i];
        if (key === undefined || f.bytes === undefined) throw new Error('a new file content has no key or bytes');
        const sealed = this.vault.sealContent(key, { address, name: fileValueName(kind, name) }, f.bytes);
        return { ...key.wrapped, sealed, size: f.bytes.length };
      }),
    );
    fresh.forEach(({ kind, name, f }, i) => {
      const ids = stored[i];
      const key = contentKeys[i];
      if (ids === undefined || key === undefined) throw new Error('a new file content was not stored');
      this.vault.adopt(ids.dataKeyId, key.key);
      next.files[kind].set(name, { ...f, contentId: ids.contentId });
    });

    // Kinds this write changed, or that still have plaintext rows, get their references written again.
    const rewritten = FILE_KINDS.filter(
      (kind) => editedKinds(edits).includes(kind) || [...files[kind].values()].some((f) => f.contentId === null),
    );
    const refsOf = (kind: FileKind) => [...next.files[kind]].map(([name, f]) => [name, f.contentId ?? ''] as const);
    const written = await this.history.in(tx).writeSealed(
      layerId,
      address,
      {
        change,
        keys,
        dataKey: versionKey.wrapped,
        properties: [...next.properties].map(
          ([key, value]) => [key, this.vault.sealProperty(versionKey, { address, name: key }, value)] as const,
        ),
        fileRefs: { cert: sortedRecord(refsOf('cert')), file: sortedRecord(refsOf('file')) },
        files: {
          kinds: rewritten,
          refs: rewritten.flatMap((kind) => refsOf(kind).map(([name, contentId]) => ({ kind, name, contentId }))),
        },
      },
      author.actor,
      author.reason,
    );
    const { dataKeyId, ...appended } = written;
    this.vault.adopt(dataKeyId, versionKey.key);
    this.reader.remember(tx, layerId, appended.version, next.properties, next.files);
    return {
      ...appended,
      properties: sortedRecord([...next.properties]),
      ...(withFiles ? { files: openedFiles(next.files) } : {}),
    };
  }

  private async writePlain(
    tx: Tx,
    layer: WritableLayer,
    edits: readonly LayerEdit[],
    author: ChangeAuthor,
  ): Promise<WrittenVersion> {
    const [only] = edits;
    if (edits.length === 1 && only !== undefined && 'properties' in only && only.mode === 'replace') {
      // The admin properties writes: two statements instead of four (bench config-history).
      return replacePropertiesRecorded(this.history, tx, layer, only.properties, author);
    }
    const layers = this.layers.in(tx);
    for (const edit of edits) {
      if ('properties' in edit) await layers.writeProperties(layer.layerId, edit.properties, edit.mode);
      else if ('kind' in edit) await layers.writeFiles(layer.layerId, edit.kind, edit.files, edit.mode);
      else {
        await layers.writeProperties(layer.layerId, Object.fromEntries(edit.restore.properties), 'replace');
        for (const kind of FILE_KINDS) {
          const files = new Map([...edit.restore.files[kind]].map(([name, f]) => [name, f.bytes] as const));
          await layers.writeFiles(layer.layerId, kind, files, 'replace');
        }
      }
    }
    const appended = await recordLayerChange(this.history, tx, layer.layerId, author);
    if (!touchesFiles(edits)) return appended;
    const files = await this.reader.files(layer, FILE_KINDS, tx);
    return { ...appended, files: openedFiles(files) };
  }
}

/** The current content with `edits` applied, in order (file entries keep their content id when unchanged). */
function applyEdits(
  properties: Map<string, JsonValue>,
  files: Files,
  edits: readonly LayerEdit[],
): { properties: Map<string, JsonValue>; files: Files } {
  let nextProperties = new Map(properties);
  const nextFiles: Files = { cert: new Map(files.cert), file: new Map(files.file) };
  for (const edit of edits) {
    if ('properties' in edit) {
      if (edit.mode === 'replace') nextProperties = new Map();
      for (const [key, value] of Object.entries(edit.properties)) {
        if (edit.mode === 'replace' || !nextProperties.has(key)) nextProperties.set(key, value);
      }
    } else if ('kind' in edit) {
      const kept =
        edit.mode === 'replace'
          ? new Map<string, { bytes: Buffer | undefined; contentId: string | null }>()
          : nextFiles[edit.kind];
      for (const [name, bytes] of edit.files) {
        if (edit.mode === 'keep-existing' && kept.has(name)) continue;
        kept.set(name, reuse(files[edit.kind].get(name), bytes));
      }
      nextFiles[edit.kind] = kept;
    } else {
      nextProperties = new Map(edit.restore.properties);
      for (const kind of FILE_KINDS) {
        nextFiles[kind] = new Map(
          [...edit.restore.files[kind]].map(([name, f]) => [name, restored(files[kind].get(name), f)] as const),
        );
      }
    }
  }
  return {
    properties: new Map([...nextProperties].sort(([a], [b]) => compareKeys(a, b))),
    files: sortFiles(nextFiles),
  };
}

/** The new bytes, keeping the stored content when they are the same. */
function reuse(current: { bytes: Buffer | undefined; contentId: string | null } | undefined, bytes: Buffer) {
  if (current?.bytes !== undefined && current.contentId !== null && current.bytes.equals(bytes)) return current;
  return { bytes, contentId: null };
}

/** A version's file made current: its stored content again, or the current one when the bytes are the same. */
function restored(current: { bytes: Buffer | undefined; contentId: string | null } | undefined, entry: FileEntry) {
  if (entry.contentId !== null) return { bytes: entry.bytes, contentId: entry.contentId };
  return reuse(current, entry.bytes);
}

function sortFiles(files: Files): Files {
  const sorted = (m: Files[FileKind]) => new Map([...m].sort(([a], [b]) => compareKeys(a, b)));
  return { cert: sorted(files.cert), file: sorted(files.file) };
}

function openedFiles(files: Files): Record<FileKind, Map<string, Buffer>> {
  const of = (m: Files[FileKind]) => new Map([...m].map(([name, f]) => [name, f.bytes ?? Buffer.alloc(0)] as const));
  return { cert: of(files.cert), file: of(files.file) };
}

/** The writer on a DataSource outside Nest (config:import, the dev seed): each version notifies at commit. */
export function layerWriterFor(dataSource: DataSource, keys: ConfigKeys, maxVersions: number): LayerWriter {
  const store = new ConfigStoreRepository(dataSource);
  const history = new ConfigHistoryRepository(dataSource);
  const vault = new ConfigVault(keys, new ConfigKeyRepository(dataSource));
  const reader = new LayerReader(store, history, vault);
  return new LayerWriter(new ConfigLayerRepository(dataSource), history, store, reader, vault, maxVersions);
}
