import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { mergedFiles, mergedProperties } from './config-store.js';
import type { JsonValue } from './config-values.js';
import type { ConfigRequest, FileKind } from './layer-address.js';

/**
 * What a runtime reads (GET /config-server/{configs,certs,files}). Only reached after the binding guard
 * allowed the request, so it takes the already-bound request and no principal.
 */
@Injectable()
export class ConfigServerService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Flat `configName.propertyName` keys, sorted, the higher layer winning per key. */
  properties(request: ConfigRequest): Promise<Record<string, JsonValue>> {
    return mergedProperties(this.db.manager, request);
  }

  /** File name to base64 content, sorted by name, the higher layer winning per name. */
  files(request: ConfigRequest, kind: FileKind): Promise<Record<string, string>> {
    return mergedFiles(this.db.manager, request, kind);
  }
}
