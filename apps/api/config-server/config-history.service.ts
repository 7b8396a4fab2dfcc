import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  ConfigHistoryRepository,
  ConfigLayerRepository,
  sortedRecord,
  UnitOfWork,
  type FileKind,
  type LayerAddress,
  type LayerVersionContent,
} from '#database';
import { KEPT_VERSIONS, notFound, SETTINGS, type Settings, pageBody, pageWindow, type PageQuery } from '#platform';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import { stale, type Versioned } from './config-admin.service.js';
import {
  toHistoryPage,
  toVersionContentView,
  type LayerHistoryPage,
  type LayerVersionContentView,
  type RolledBackLayerView,
} from './config-history.view.js';
import { unlessUnchanged, type ChangeAuthor } from './layer-history.js';
import { LayerReader, type OpenedVersion } from './layer-reader.js';
import { LayerWriter } from './layer-writer.js';

/** Each layer keeps at least this many versions, whatever their age (DESIGN 14). */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

const unknownVersion = (version: number) =>
  notFound(`version ${version} of this layer does not exist or was pruned (CONFIG_HISTORY_DAYS)`);

/**
 * A layer's history (DESIGN 14): its versions, one version's content, and rollback, which makes an old
 * version's content current as a new version. Prunes versions older than CONFIG_HISTORY_DAYS hourly.
 */
@Injectable()
export class ConfigHistoryService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ConfigHistory');
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly work: UnitOfWork,
    private readonly layers: ConfigLayerRepository,
    private readonly history: ConfigHistoryRepository,
    private readonly reader: LayerReader,
    private readonly writer: LayerWriter,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  onModuleInit(): void {
    const prune = (): void => {
      this.prune().then(
        (pruned) => pruned > 0 && this.logger.log({ pruned }, 'pruned old config layer versions'),
        (error: unknown) => this.logger.warn({ err: error }, 'pruning config layer versions failed'),
      );
    };
    setTimeout(prune, 5000).unref();
    this.pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruneTimer);
  }

  /**
   * Versions older than CONFIG_HISTORY_DAYS beyond each layer's last KEPT_VERSIONS, and any beyond its last
   * CONFIG_HISTORY_MAX_VERSIONS; answers how many went.
   */
  prune(): Promise<number> {
    const { historyDays, historyMaxVersions } = this.settings.configStore;
    return this.history.prune(historyDays, KEPT_VERSIONS, historyMaxVersions);
  }

  /** Newest first, from an offset or after a cursor's version; a layer that never existed has no versions. */
  async list(address: LayerAddress, query: PageQuery): Promise<LayerHistoryPage> {
    const scope = { list: 'config-history', filter: address };
    const window = pageWindow(query, scope, this.history.keyset.accepts);
    const layer = await this.layers.find(address);
    if (layer === null) return toHistoryPage(pageBody(window, scope, { total: 0 }, 'versions', []));
    const page = await this.history.page(layer.layerId, window);
    const versions = await this.reader.withDigests({ layerId: layer.layerId, address }, page.rows);
    return toHistoryPage(pageBody(window, scope, page, 'versions', versions));
  }

  async version(address: LayerAddress, version: number, withContents: boolean): Promise<LayerVersionContentView> {
    const layer = await this.layers.find(address);
    const opened = layer === null ? null : await this.reader.version({ layerId: layer.layerId, address }, version);
    if (opened === null) throw unknownVersion(version);
    return toVersionContentView(contentOf(opened, withContents));
  }

  /** Makes `version`'s content current as the layer's next version; 404 not kept, then 412 stale `If-Match`. */
  async rollback(
    author: ChangeAuthor,
    address: LayerAddress,
    version: number,
    condition: VersionCondition,
  ): Promise<Versioned<RolledBackLayerView>> {
    const written = this.work.run(async (tx) => {
      const existing = await this.layers.in(tx).find(address, true);
      if (existing === null) throw unknownVersion(version);
      // DESIGN 3's order: an unknown version (404) before a stale If-Match (412).
      const old = await this.reader.version({ layerId: existing.layerId, address }, version, tx);
      if (old === null) throw unknownVersion(version);
      if (!versionMatches(condition, existing.aggregateVersion)) throw stale(existing.aggregateVersion);
      const { layerId, previous } = await this.layers.in(tx).upsertVersioned(address, author.actor);
      const appended = await this.writer.write(tx, { layerId, address, previous }, [{ restore: old.content }], author);
      return {
        view: { ...address, ...toVersionContentView(contentOf({ ...old, record: appended }, false)) },
        appended,
      };
    });
    return unlessUnchanged(
      written.then(async ({ view, appended }) => {
        await appended.announced;
        return { view, version: appended.version };
      }),
      // Version n's content is the current one: no version is added, the current one is the answer.
      async (current) => {
        const layer = await this.layers.find(address);
        const opened = layer === null ? null : await this.reader.version({ layerId: layer.layerId, address }, current);
        if (opened === null) throw unknownVersion(current);
        return { view: { ...address, ...toVersionContentView(contentOf(opened, false)) }, version: current };
      },
    );
  }
}

/** A version's content as history shows it: properties, file hashes, and the contents when asked for. */
function contentOf(opened: OpenedVersion, withContents: boolean): LayerVersionContent {
  const { record, content, sha256 } = opened;
  const base64 = (kind: FileKind) =>
    sortedRecord([...content.files[kind]].map(([name, f]) => [name, f.bytes.toString('base64')] as const));
  return {
    version: record.version,
    at: record.at,
    actor: record.actor,
    reason: record.reason,
    change: record.change,
    properties: sortedRecord(content.properties),
    files: sha256,
    ...(withContents ? { fileContents: { cert: base64('cert'), file: base64('file') } } : {}),
  };
}
