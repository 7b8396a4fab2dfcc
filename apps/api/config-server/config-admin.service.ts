import { Injectable } from '@nestjs/common';
import {
  compareKeys,
  ConfigHistoryRepository,
  ConfigLayerRepository,
  sortedRecord,
  UnitOfWork,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type Tx,
} from '#database';
import { preconditionFailed } from '#platform';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import {
  toLayerSummaryView,
  type LayerPage,
  toFilesLayerView,
  toPropertiesLayerView,
  type FilesLayerView,
  type PropertiesLayerView,
} from './config-layer.view.js';
import { recordLayerChange, replacePropertiesRecorded, unlessUnchanged, type ChangeAuthor } from './layer-history.js';

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
    private readonly history: ConfigHistoryRepository,
  ) {}

  async putProperties(
    author: ChangeAuthor,
    address: LayerAddress,
    properties: Readonly<Record<string, JsonValue>>,
    condition: VersionCondition,
  ): Promise<Versioned<PropertiesLayerView>> {
    const written = this.work.run(async (tx) => {
      const layerId = await this.lockWritable(tx, author, address, condition);
      // The version's snapshot is the layer as written: no separate read-back.
      return replacePropertiesRecorded(this.history, tx, { layerId, address }, properties, author);
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
    const properties = layer === null ? {} : await this.layers.properties(layer.layerId);
    return { view: toPropertiesLayerView(address, properties), version: layer?.aggregateVersion ?? 0 };
  }

  /** Idempotent: an unknown layer is answered like a deleted one, and gets no version. */
  async deleteProperties(author: ChangeAuthor, address: LayerAddress, condition: VersionCondition): Promise<void> {
    const appended = await unlessUnchanged(
      this.work.run(async (tx) => {
        const layerId = await this.lockExisting(tx, author, address, condition);
        if (layerId === undefined) return undefined;
        return replacePropertiesRecorded(this.history, tx, { layerId, address }, {}, author);
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
      const layerId = await this.lockWritable(tx, author, address, condition);
      const layers = this.layers.in(tx);
      await layers.writeFiles(layerId, kind, files, 'replace');
      const appended = await this.record(tx, layerId, author);
      return { view: toFilesLayerView(address, kind, await layers.files(layerId, kind)), appended };
    });
    return unlessUnchanged(
      written.then(async ({ view, appended }) => {
        await appended.announced;
        return { view, version: appended.version };
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
    const files = layer === null ? new Map<string, Buffer>() : await this.layers.files(layer.layerId, kind);
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
        const layerId = await this.lockExisting(tx, author, address, condition);
        if (layerId === undefined) return undefined;
        await this.layers.in(tx).writeFiles(layerId, kind, new Map(), 'replace');
        return this.record(tx, layerId, author);
      }),
      () => undefined,
    );
    await appended?.announced;
  }

  /** `GET /config-server/admin/layers`: the addresses that have a layer, for pickers (DESIGN 7). */
  async list(host: string | undefined, offset: number, limit: number): Promise<LayerPage> {
    const { total, layers } = await this.layers.page(host, offset, limit);
    return { total, layers: layers.map(toLayerSummaryView) };
  }

  /** Creates or touches the layer (holding its row lock), then checks `If-Match` against its version before. */
  private async lockWritable(
    tx: Tx,
    author: ChangeAuthor,
    address: LayerAddress,
    condition: VersionCondition,
  ): Promise<string> {
    const { layerId, previous } = await this.layers.in(tx).upsertVersioned(address, author.actor);
    // A failure rolls back the upsert too: nothing of this write remains.
    if (!versionMatches(condition, previous)) throw stale(previous);
    return layerId;
  }

  /** `lockWritable` for deletes: an unknown layer (after `If-Match` is judged) is left alone, undefined. */
  private async lockExisting(
    tx: Tx,
    author: ChangeAuthor,
    address: LayerAddress,
    condition: VersionCondition,
  ): Promise<string | undefined> {
    const existing = await this.layers.in(tx).find(address, true);
    if (!versionMatches(condition, existing?.aggregateVersion ?? 0)) throw stale(existing?.aggregateVersion ?? 0);
    if (existing === null) return undefined;
    return (await this.layers.in(tx).upsertVersioned(address, author.actor)).layerId;
  }

  private record(tx: Tx, layerId: string, author: ChangeAuthor) {
    return recordLayerChange(this.history, tx, layerId, author);
  }
}

export const stale = (version: number) =>
  preconditionFailed(`the layer is at version ${version}, not the one in If-Match; read it again`);
