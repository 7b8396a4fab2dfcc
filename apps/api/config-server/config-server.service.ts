import { Injectable } from '@nestjs/common';
import { ConfigLayerRepository, type FileKind, type JsonValue } from '#database';
import type { ConfigRequest } from './layer-address.js';

/**
 * What a runtime reads (GET /config-server/{configs,certs,files}). Only reached after the binding guard
 * allowed the request, so it takes the already-bound request and no principal.
 */
@Injectable()
export class ConfigServerService {
  constructor(private readonly layers: ConfigLayerRepository) {}

  /** Flat `configName.propertyName` keys, sorted, the higher layer winning per key. */
  properties(request: ConfigRequest): Promise<Record<string, JsonValue>> {
    return this.layers.mergedProperties(request);
  }

  /** File name to base64 content, sorted by name, the higher layer winning per name. */
  files(request: ConfigRequest, kind: FileKind): Promise<Record<string, string>> {
    return this.layers.mergedFiles(request, kind);
  }
}
