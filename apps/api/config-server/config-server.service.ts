import { Injectable } from '@nestjs/common';
import { ConfigLayerRepository, sortedRecord, type FileKind, type JsonValue } from '#database';
import { ProblemException } from '#platform';
import { ConfigVault } from './encryption/config-vault.js';
import type { ConfigRequest } from './layer-address.js';

/**
 * What a runtime reads (GET /config-server/{configs,certs,files}). Only reached after the binding guard
 * allowed the request, so it takes the already-bound request and no principal.
 */
/** Raw bytes one certs or files answer may carry (4 MiB; about 5.4 MiB as base64 JSON). */
export const MAX_FILES_BYTES = 4 * 1024 * 1024;

/** Opened merges kept in memory, by address, with the layer versions they were opened from. */
const OPENED_MERGES = 1_000;

interface OpenedMerge {
  readonly versions: string;
  readonly properties: Record<string, JsonValue>;
}

@Injectable()
export class ConfigServerService {
  private readonly opened = new Map<string, OpenedMerge>();

  constructor(
    private readonly layers: ConfigLayerRepository,
    private readonly vault: ConfigVault,
  ) {}

  /**
   * Flat `configName.propertyName` keys, sorted, the higher layer winning per key; opened after the merge,
   * once per request address and set of layer versions (a version's values never change): while those
   * versions are current, a read neither fetches nor decrypts a value.
   */
  async properties(request: ConfigRequest): Promise<Record<string, JsonValue>> {
    const address = JSON.stringify([
      request.host,
      request.serviceId,
      request.productId,
      request.productVersion,
      request.envTag,
    ]);
    const known = this.opened.get(address);
    const { values, versions } = await this.layers.mergedProperties(request, known?.versions ?? null);
    if (values === undefined && known !== undefined) return known.properties;
    const properties = sortedRecord(await this.vault.openJson([...(values ?? [])]));
    this.opened.delete(address);
    if (this.opened.size >= OPENED_MERGES) this.opened.delete(this.opened.keys().next().value ?? '');
    this.opened.set(address, { versions, properties });
    return properties;
  }

  /**
   * File name to base64 content, sorted by name, the higher layer winning per name. A merge larger than
   * MAX_FILES_BYTES is refused rather than built in memory (documented in docs/decisions.md).
   */
  async files(request: ConfigRequest, kind: FileKind): Promise<Record<string, string>> {
    const merged = await this.layers.mergedFiles(request, kind, MAX_FILES_BYTES);
    if ('files' in merged) {
      const opened = await this.vault.openBytes([...merged.files]);
      return sortedRecord(opened.map(([name, bytes]) => [name, bytes.toString('base64')] as const));
    }
    throw new ProblemException(
      500,
      `The ${kind === 'cert' ? 'certificates' : 'files'} of this request add up to ${merged.tooLarge} bytes, ` +
        `over the ${MAX_FILES_BYTES}-byte limit of one answer; an operator must move some to another layer or service`,
    );
  }
}
