import { Injectable } from '@nestjs/common';
import {
  compareKeys,
  ConfigLayerRepository,
  sortedRecord,
  UnitOfWork,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type Tx,
} from '#database';
import { preconditionFailed, pageBody, pageWindow, type PageQuery } from '#platform';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import {
  toLayerSummaryView,
  type LayerPage,
  toFilesLayerView,
  toPropertiesLayerView,
  type FilesLayerView,
  type PropertiesLayerView,
} from './config-layer.view.js';
import { unlessUnchanged, type ChangeAuthor } from './layer-history.js';
import { LayerReader } from './layer-reader.js';
import { LayerWriter, type WritableLayer } from './layer-writer.js';

/** A layer part as read or written, with the layer's version after it (0: the layer does not exist). */
export interface Versioned<T> {
  readonly view: T;
  readonly version: number;
}

/**
 * Operators' view of one layer (scope portal.admin): each write replaces a layer part in one transaction,
 * judged against `If-Match` under the layer's row lock (DESIGN 7), and appends the layer's next version
 * with its `config.changed` event in that transaction (DESIGN 14).
 */
@Injectable()
export class ConfigAdminService {
  constructor(
    private readonly work: UnitOfWork,
    private readonly layers: ConfigLayerRepository,
    private readonly reader: LayerReader,
    private readonly writer: LayerWriter,
  ) {}

  async putProperties(
    author: ChangeAuthor,
    address: LayerAddress,
    properties: Readonly<Record<string, JsonValue>>,
    condition: VersionCondition,
  ): Promise<Versioned<PropertiesLayerView>> {
    const written = this.work.run(async (tx) => {
      const layer = await this.lockWritable(tx, author, address, condition);
      return this.writer.write(tx, layer, [{ properties, mode: 'replace' }], author);
    });
    return unlessUnchanged(
      written.then(async (appended) => {
        await appended.announced;
        return { view: toPropertiesLayerView(address, appended.properties), version: appended.version };
      }),
      // The same properties: they are the layer's, in its order.
      (version) => ({ view: toPropertiesLayerView(address, sortedRecord(Object.entries(properties))), version }),
    );
  }

  async getProperties(address: LayerAddress): Promise<Versioned<PropertiesLayerView>> {
    const layer = await this.layers.find(address);
    const properties = layer === null ? new Map() : await this.reader.properties({ layerId: layer.layerId, address });
    return { view: toPropertiesLayerView(address, sortedRecord(properties)), version: layer?.aggregateVersion ?? 0 };
  }

  /** Idempotent: an unknown layer is answered like a deleted one, and gets no version. */
  async deleteProperties(author: ChangeAuthor, address: LayerAddress, condition: VersionCondition): Promise<void> {
    const appended = await unlessUnchanged(
      this.work.run(async (tx) => {
        const layer = await this.lockExisting(tx, author, address, condition);
        if (layer === undefined) return undefined;
        return this.writer.write(tx, layer, [{ properties: {}, mode: 'replace' }], author);
      }),
      () => undefined,
    );
    await appended?.announced;
  }

  async putFiles(
    author: ChangeAuthor,
    address: LayerAddress,
    kind: FileKind,
    files: ReadonlyMap<string, Buffer>,
    condition: VersionCondition,
  ): Promise<Versioned<FilesLayerView>> {
    const written = this.work.run(async (tx) => {
      const layer = await this.lockWritable(tx, author, address, condition);
      return this.writer.write(tx, layer, [{ kind, files, mode: 'replace' }], author);
    });
    return unlessUnchanged(
      written.then(async (appended) => {
        await appended.announced;
        const now = appended.files?.[kind] ?? new Map<string, Buffer>();
        return { view: toFilesLayerView(address, kind, now), version: appended.version };
      }),
      // The same files: the view is the request's, in the layer's order.
      (version) => ({
        view: toFilesLayerView(address, kind, new Map([...files].sort(([a], [b]) => compareKeys(a, b)))),
        version,
      }),
    );
  }

  async getFiles(address: LayerAddress, kind: FileKind): Promise<Versioned<FilesLayerView>> {
    const layer = await this.layers.find(address);
    const files = new Map<string, Buffer>();
    if (layer !== null) {
      const stored = await this.reader.files({ layerId: layer.layerId, address }, [kind]);
      for (const [name, f] of stored[kind]) files.set(name, f.bytes ?? Buffer.alloc(0));
    }
    return { view: toFilesLayerView(address, kind, files), version: layer?.aggregateVersion ?? 0 };
  }

  async deleteFiles(
    author: ChangeAuthor,
    address: LayerAddress,
    kind: FileKind,
    condition: VersionCondition,
  ): Promise<void> {
    const appended = await unlessUnchanged(
      this.work.run(async (tx) => {
        const layer = await this.lockExisting(tx, author, address, condition);
        if (layer === undefined) return undefined;
        return this.writer.write(tx, layer, [{ kind, files: new Map(), mode: 'replace' }], author);
      }),
      () => undefined,
    );
    await appended?.announced;
  }

  /** `GET /config-server/admin/layers`: the addresses that have a layer, for pickers (DESIGN 7), paged. */
  async list(host: string | undefined, query: PageQuery): Promise<LayerPage> {
    const scope = { list: 'config-layers', filter: { host } };
    const window = pageWindow(query, scope, this.layers.keyset.accepts);
    const page = await this.layers.page(host, window);
    return pageBody(window, scope, page, 'layers', page.rows.map(toLayerSummaryView));
  }

  /** Creates or touches the layer (holding its row lock), then checks `If-Match` against its version before. */
  private async lockWritable(
    tx: Tx,
    author: ChangeAuthor,
    address: LayerAddress,
    condition: VersionCondition,
  ): Promise<WritableLayer> {
    const { layerId, previous } = await this.layers.in(tx).upsertVersioned(address, author.actor);
    // A failure rolls back the upsert too: nothing of this write remains.
    if (!versionMatches(condition, previous)) throw stale(previous);
    return { layerId, address, previous };
  }

  /** `lockWritable` for deletes: an unknown layer (after `If-Match` is judged) is left alone, undefined. */
  private async lockExisting(
    tx: Tx,
    author: ChangeAuthor,
    address: LayerAddress,
    condition: VersionCondition,
  ): Promise<WritableLayer | undefined> {
    const existing = await this.layers.in(tx).find(address, true);
    if (!versionMatches(condition, existing?.aggregateVersion ?? 0)) throw stale(existing?.aggregateVersion ?? 0);
    if (existing === null) return undefined;
    const { layerId, previous } = await this.layers.in(tx).upsertVersioned(address, author.actor);
    return { layerId, address, previous };
  }
}

export const stale = (version: number) =>
  preconditionFailed(`the layer is at version ${version}, not the one in If-Match; read it again`);
