import { Injectable } from '@nestjs/common';
import { ConfigLayerRepository, UnitOfWork, type FileKind, type JsonValue, type LayerAddress } from '#database';
import type { Principal } from '#token-binding';
import {
  toFilesLayerView,
  toPropertiesLayerView,
  type FilesLayerView,
  type PropertiesLayerView,
} from './config-layer.view.js';

/** Operators' view of one layer (scope portal.admin): each write replaces a layer part in one transaction. */
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
  ): Promise<PropertiesLayerView> {
    return this.work.run(async (tx) => {
      const layers = this.layers.in(tx);
      const layerId = await layers.upsert(address, principal.subject);
      await layers.writeProperties(layerId, properties, 'replace');
      await layers.dropIfEmpty(layerId);
      return toPropertiesLayerView(address, await layers.properties(layerId));
    });
  }

  async getProperties(address: LayerAddress): Promise<PropertiesLayerView> {
    const layer = await this.layers.find(address);
    return toPropertiesLayerView(address, layer === null ? {} : await this.layers.properties(layer.layerId));
  }

  /** Idempotent: an empty or unknown layer is answered like a deleted one. */
  async deleteProperties(address: LayerAddress): Promise<void> {
    await this.work.run(async (tx) => {
      const layers = this.layers.in(tx);
      const layer = await layers.find(address, true);
      if (layer === null) return;
      await layers.writeProperties(layer.layerId, {}, 'replace');
      await layers.dropIfEmpty(layer.layerId);
    });
  }

  async putFiles(
    principal: Principal,
    address: LayerAddress,
    kind: FileKind,
    files: ReadonlyMap<string, Buffer>,
  ): Promise<FilesLayerView> {
    return this.work.run(async (tx) => {
      const layers = this.layers.in(tx);
      const layerId = await layers.upsert(address, principal.subject);
      await layers.writeFiles(layerId, kind, files, 'replace');
      await layers.dropIfEmpty(layerId);
      return toFilesLayerView(address, kind, await layers.files(layerId, kind));
    });
  }

  async getFiles(address: LayerAddress, kind: FileKind): Promise<FilesLayerView> {
    const layer = await this.layers.find(address);
    const files = layer === null ? new Map<string, Buffer>() : await this.layers.files(layer.layerId, kind);
    return toFilesLayerView(address, kind, files);
  }

  async deleteFiles(address: LayerAddress, kind: FileKind): Promise<void> {
    await this.work.run(async (tx) => {
      const layers = this.layers.in(tx);
      const layer = await layers.find(address, true);
      if (layer === null) return;
      await layers.writeFiles(layer.layerId, kind, new Map(), 'replace');
      await layers.dropIfEmpty(layer.layerId);
    });
  }
}
