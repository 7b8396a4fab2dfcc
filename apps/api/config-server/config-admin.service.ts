import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '#token-binding';
import {
  dropLayerIfEmpty,
  findLayer,
  layerFiles,
  layerProperties,
  upsertLayer,
  writeFiles,
  writeProperties,
} from './config-store.js';
import type { JsonValue } from './config-values.js';
import {
  toFilesLayerView,
  toPropertiesLayerView,
  type FilesLayerView,
  type PropertiesLayerView,
} from './config-layer.view.js';
import type { FileKind, LayerAddress } from './layer-address.js';

/** Operators' view of one layer (scope portal.admin): each write replaces a layer part in one transaction. */
@Injectable()
export class ConfigAdminService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async putProperties(
    principal: Principal,
    address: LayerAddress,
    properties: Readonly<Record<string, JsonValue>>,
  ): Promise<PropertiesLayerView> {
    return this.db.transaction(async (tx) => {
      const layerId = await upsertLayer(tx, address, principal.subject);
      await writeProperties(tx, layerId, properties, 'replace');
      await dropLayerIfEmpty(tx, layerId);
      return toPropertiesLayerView(address, await layerProperties(tx, layerId));
    });
  }

  async getProperties(address: LayerAddress): Promise<PropertiesLayerView> {
    const layer = await findLayer(this.db.manager, address);
    return toPropertiesLayerView(address, layer === null ? {} : await layerProperties(this.db.manager, layer.layerId));
  }

  /** Idempotent: an empty or unknown layer is answered like a deleted one. */
  async deleteProperties(address: LayerAddress): Promise<void> {
    await this.db.transaction(async (tx) => {
      const layer = await findLayer(tx, address, true);
      if (layer === null) return;
      await writeProperties(tx, layer.layerId, {}, 'replace');
      await dropLayerIfEmpty(tx, layer.layerId);
    });
  }

  async putFiles(
    principal: Principal,
    address: LayerAddress,
    kind: FileKind,
    files: ReadonlyMap<string, Buffer>,
  ): Promise<FilesLayerView> {
    return this.db.transaction(async (tx) => {
      const layerId = await upsertLayer(tx, address, principal.subject);
      await writeFiles(tx, layerId, kind, files, 'replace');
      await dropLayerIfEmpty(tx, layerId);
      return toFilesLayerView(address, kind, await layerFiles(tx, layerId, kind));
    });
  }

  async getFiles(address: LayerAddress, kind: FileKind): Promise<FilesLayerView> {
    const layer = await findLayer(this.db.manager, address);
    const files = layer === null ? new Map<string, Buffer>() : await layerFiles(this.db.manager, layer.layerId, kind);
    return toFilesLayerView(address, kind, files);
  }

  async deleteFiles(address: LayerAddress, kind: FileKind): Promise<void> {
    await this.db.transaction(async (tx) => {
      const layer = await findLayer(tx, address, true);
      if (layer === null) return;
      await writeFiles(tx, layer.layerId, kind, new Map(), 'replace');
      await dropLayerIfEmpty(tx, layer.layerId);
    });
  }
}
