import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigHistoryRepository, ConfigLayerRepository, UnitOfWork, type LayerAddress } from '#database';
import { KEPT_VERSIONS, notFound, SETTINGS, type Settings } from '#platform';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import { stale, type Versioned } from './config-admin.service.js';
import {
  toHistoryPage,
  toVersionContentView,
  type LayerHistoryPage,
  type LayerVersionContentView,
  type RolledBackLayerView,
} from './config-history.view.js';
import { recordLayerChange, unlessUnchanged, type ChangeAuthor } from './layer-history.js';

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

  /** Newest first; a layer that never existed has no versions. */
  async list(address: LayerAddress, offset: number, limit: number): Promise<LayerHistoryPage> {
    const layer = await this.layers.find(address);
    if (layer === null) return { total: 0, versions: [] };
    return toHistoryPage(await this.history.page(layer.layerId, offset, limit));
  }

  async version(address: LayerAddress, version: number, withContents: boolean): Promise<LayerVersionContentView> {
    const layer = await this.layers.find(address);
    const content = layer === null ? null : await this.history.version(layer.layerId, version, withContents);
    if (content === null) throw unknownVersion(version);
    return toVersionContentView(content);
  }

  /** Makes `version`'s content current as the layer's next version; 412 stale `If-Match`, 404 not kept. */
  async rollback(
    author: ChangeAuthor,
    address: LayerAddress,
    version: number,
    condition: VersionCondition,
  ): Promise<Versioned<RolledBackLayerView>> {
    const written = this.work.run(async (tx) => {
      const existing = await this.layers.in(tx).find(address, true);
      if (existing === null) throw unknownVersion(version);
      if (!versionMatches(condition, existing.aggregateVersion)) throw stale(existing.aggregateVersion);
      const { layerId } = await this.layers.in(tx).upsertVersioned(address, author.actor);
      if (!(await this.history.in(tx).restore(layerId, version))) throw unknownVersion(version);
      const appended = await recordLayerChange(this.history, tx, layerId, author);
      const content = await this.history.in(tx).version(layerId, appended.version, false);
      if (content === null) throw new Error('the version just appended is missing');
      return { view: { ...address, ...toVersionContentView(content) }, appended };
    });
    return unlessUnchanged(
      written.then(async ({ view, appended }) => {
        await appended.announced;
        return { view, version: appended.version };
      }),
      // Version n's content is the current one: no version is added, the current one is the answer.
      async (current) => {
        const layer = await this.layers.find(address);
        const content = layer === null ? null : await this.history.version(layer.layerId, current, false);
        if (content === null) throw unknownVersion(current);
        return { view: { ...address, ...toVersionContentView(content) }, version: current };
      },
    );
  }
}
