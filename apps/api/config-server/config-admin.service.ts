import { Injectable } from '@nestjs/common';
import {
  ConfigLayerRepository,
  UnitOfWork,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type Tx,
} from '#database';
import { preconditionFailed } from '#platform';
import type { Principal } from '#token-binding';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import {
  toLayerSummaryView,
  type LayerPage,
  toFilesLayerView,
  toPropertiesLayerView,
  type FilesLayerView,
  type PropertiesLayerView,
} from './config-layer.view.js';

/** A layer part as read or written, with the layer's version after it (0: the layer does not exist). */
export interface Versioned<T> {
  readonly view: T;
  readonly version: number;
}

/**
 * Operators' view of one layer (scope portal.admin): each write replaces a layer part in one transaction,
 * judged against `If-Match` under the layer's row lock (DESIGN 7).
 */
@Injectable()
export class ConfigAdminService {
  constructor(
    private readonly work: UnitOfWork,
    private readonly layers: ConfigLayerRepository,
  ) {}

  async putProperties(
    principal: Principal,
    address: LayerAddress,
    properties: Readonly<Record<string, JsonValue>>,
    condition: VersionCondition,
  ): Promise<Versioned<PropertiesLayerView>> {
    return this.work.run(async (tx) => {
      const { layerId, version } = await this.lockWritable(tx, principal, address, condition);
      const layers = this.layers.in(tx);
      await layers.writeProperties(layerId, properties, 'replace');
      const kept = await this.dropIfEmpty(tx, layerId);
      return {
        view: toPropertiesLayerView(address, await layers.properties(layerId)),
        version: kept ? version : 0,
      };
    });
  }

  async getProperties(address: LayerAddress): Promise<Versioned<PropertiesLayerView>> {
    const layer = await this.layers.find(address);
    const properties = layer === null ? {} : await this.layers.properties(layer.layerId);
    return { view: toPropertiesLayerView(address, properties), version: layer?.aggregateVersion ?? 0 };
  }

  /** Idempotent: an empty or unknown layer is answered like a deleted one. */
  async deleteProperties(principal: Principal, address: LayerAddress, condition: VersionCondition): Promise<void> {
    await this.work.run(async (tx) => {
      const existing = await this.layers.in(tx).find(address, true);
      if (!versionMatches(condition, existing?.aggregateVersion ?? 0)) throw stale(existing?.aggregateVersion ?? 0);
      if (existing === null) return;
      const { layerId } = await this.layers.in(tx).upsertVersioned(address, principal.subject);
      await this.layers.in(tx).writeProperties(layerId, {}, 'replace');
      await this.dropIfEmpty(tx, layerId);
    });
  }

  async putFiles(
    principal: Principal,
    address: LayerAddress,
    kind: FileKind,
    files: ReadonlyMap<string, Buffer>,
    condition: VersionCondition,
  ): Promise<Versioned<FilesLayerView>> {
    return this.work.run(async (tx) => {
      const { layerId, version } = await this.lockWritable(tx, principal, address, condition);
      const layers = this.layers.in(tx);
      await layers.writeFiles(layerId, kind, files, 'replace');
      const kept = await this.dropIfEmpty(tx, layerId);
      return { view: toFilesLayerView(address, kind, await layers.files(layerId, kind)), version: kept ? version : 0 };
    });
  }

  async getFiles(address: LayerAddress, kind: FileKind): Promise<Versioned<FilesLayerView>> {
    const layer = await this.layers.find(address);
    const files = layer === null ? new Map<string, Buffer>() : await this.layers.files(layer.layerId, kind);
    return { view: toFilesLayerView(address, kind, files), version: layer?.aggregateVersion ?? 0 };
  }

  async deleteFiles(
    principal: Principal,
    address: LayerAddress,
    kind: FileKind,
    condition: VersionCondition,
  ): Promise<void> {
    await this.work.run(async (tx) => {
      const existing = await this.layers.in(tx).find(address, true);
      if (!versionMatches(condition, existing?.aggregateVersion ?? 0)) throw stale(existing?.aggregateVersion ?? 0);
      if (existing === null) return;
      const { layerId } = await this.layers.in(tx).upsertVersioned(address, principal.subject);
      await this.layers.in(tx).writeFiles(layerId, kind, new Map(), 'replace');
      await this.dropIfEmpty(tx, layerId);
    });
  }

  /** `GET /config-server/admin/layers`: the addresses that have a layer, for pickers (DESIGN 7). */
  async list(host: string | undefined, offset: number, limit: number): Promise<LayerPage> {
    const { total, layers } = await this.layers.page(host, offset, limit);
    return { total, layers: layers.map(toLayerSummaryView) };
  }

  /** Creates or touches the layer (holding its row lock), then checks `If-Match` against its version before. */
  private async lockWritable(
    tx: Tx,
    principal: Principal,
    address: LayerAddress,
    condition: VersionCondition,
  ): Promise<{ layerId: string; version: number }> {
    const { layerId, version, previous } = await this.layers.in(tx).upsertVersioned(address, principal.subject);
    // A failure rolls back the upsert too: nothing of this write remains.
    if (!versionMatches(condition, previous)) throw stale(previous);
    return { layerId, version };
  }

  /** True when the layer still holds something (an empty layer is removed). */
  private async dropIfEmpty(tx: Tx, layerId: string): Promise<boolean> {
    const layers = this.layers.in(tx);
    await layers.dropIfEmpty(layerId);
    return (await layers.exists(layerId)) === true;
  }
}

const stale = (version: number) =>
  preconditionFailed(`the layer is at version ${version}, not the one in If-Match; read it again`);
