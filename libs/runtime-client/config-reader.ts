import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RuntimeIdentity } from './claims.js';
import { configDiff, type ConfigChange, type ConfigChangeListener, type ConfigLayerAddress } from './config-change.js';
import type { TokenSource } from './token-source.js';

/** A config-server or controller answer that was not a success. */
export class RuntimeRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeRequestError';
  }
}

/** A plain file name: no path separator, no `..`, no control characters (DESIGN 11). */
export function isPlainFileName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name !== '' && name !== '.' && !name.includes('..') && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

interface Cached {
  readonly etag: string;
  readonly body: unknown;
}

type ConfigTrigger = ConfigChange['cause'];

/** Where a runtime reads its config: its identity, the api, and the layer address beyond the identity. */
export interface ConfigSource extends RuntimeIdentity {
  readonly apiUrl: string;
  readonly productId?: string;
  readonly productVersion?: string;
}

/**
 * A runtime's reads of the config server (DESIGN 11, 14): configs, certs and files with their ETags, and
 * the listeners told what changed when a push or a reconnect makes the client read its config again.
 */
export class ConfigReader {
  private readonly cache = new Map<string, Cached>();
  private readonly listeners = new Set<ConfigChangeListener>();
  /** The config the listeners last saw (their baseline); undefined until `onConfigChange` read it. */
  private seen: Record<string, unknown> | undefined;
  /** A re-read is running; `again` holds the latest trigger that arrived meanwhile. */
  private reading = false;
  private again: ConfigTrigger | undefined;

  constructor(
    private readonly identity: ConfigSource,
    private readonly tokens: TokenSource,
    private readonly fetchImpl: typeof fetch,
    private readonly onError: (error: unknown) => void,
  ) {}

  config(): Promise<Record<string, unknown>> {
    return this.read('configs') as Promise<Record<string, unknown>>;
  }

  certs(): Promise<Record<string, string>> {
    return this.read('certs') as Promise<Record<string, string>>;
  }

  files(): Promise<Record<string, string>> {
    return this.read('files') as Promise<Record<string, string>>;
  }

  /**
   * `callback` gets the new config and the keys that changed each time it changes (DESIGN 14): on every
   * `config/changed` from the controller, and after every reconnect (a change made while disconnected is
   * noticed then), the client reads its config again with its ETag; an unchanged config calls nothing.
   * Resolves once the current config is read as the baseline. Returns a function that removes `callback`.
   */
  async onConfigChange(callback: ConfigChangeListener): Promise<() => void> {
    this.listeners.add(callback);
    if (this.seen === undefined) {
      try {
        this.seen = await this.config();
      } catch (error) {
        this.listeners.delete(callback);
        throw error;
      }
    }
    return () => this.listeners.delete(callback);
  }

  /** A `config/changed` push (DESIGN 14): the config is read again, naming the layer and its version. */
  pushed(params: unknown): void {
    if (typeof params !== 'object' || params === null) return;
    const { layer, version } = params as { layer?: ConfigLayerAddress; version?: unknown };
    if (typeof layer !== 'object' || layer === null) return;
    this.reload({ type: 'pushed', layer, version: typeof version === 'number' ? version : null });
  }

  /** Reads the config again and tells the listeners what changed; one read at a time, the latest trigger last. */
  reload(cause: ConfigTrigger): void {
    if (this.listeners.size === 0 || this.seen === undefined) return;
    if (this.reading) {
      this.again = cause;
      return;
    }
    this.reading = true;
    void this.config()
      .then((values) => {
        const before = this.seen ?? {};
        this.seen = values;
        const diff = configDiff(before, values);
        if (diff.added.length + diff.changed.length + diff.removed.length === 0) return;
        for (const listener of this.listeners) listener({ values, ...diff, cause });
      })
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.reading = false;
        const again = this.again;
        this.again = undefined;
        if (again !== undefined) this.reload(again);
      });
  }

  /**
   * Writes the config server's files (or certs) into `dir`, readable by the runtime's user only (0600; a
   * directory it creates 0700): they hold keys and passwords. Any name that is not plain is refused first.
   */
  async writeFiles(dir: string, kind: 'files' | 'certs' = 'files'): Promise<string[]> {
    const files = kind === 'files' ? await this.files() : await this.certs();
    const names = Object.keys(files);
    const bad = names.find((name) => !isPlainFileName(name));
    if (bad !== undefined)
      throw new RuntimeRequestError(0, `refusing to write file ${JSON.stringify(bad)}: not a plain name`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    for (const name of names) await writeOwnerOnly(dir, name, Buffer.from(files[name] ?? '', 'base64'));
    return names;
  }

  private async read(kind: 'configs' | 'certs' | 'files'): Promise<unknown> {
    const { host, serviceId, envTag, productId, productVersion } = this.identity;
    const query = new URLSearchParams({ host, serviceId });
    if (envTag !== undefined && envTag !== '') query.set('envTag', envTag);
    if (productId !== undefined) query.set('productId', productId);
    if (productVersion !== undefined) query.set('productVersion', productVersion);
    const url = `${this.identity.apiUrl.replace(/\/$/, '')}/config-server/${kind}?${query.toString()}`;
    const cached = this.cache.get(url);
    const headers: Record<string, string> = {
      authorization: `Bearer ${await this.tokens.token()}`,
      accept: 'application/json',
    };
    if (cached !== undefined) headers['if-none-match'] = cached.etag;
    const response = await this.fetchImpl(url, { headers, signal: AbortSignal.timeout(10_000) });
    if (response.status === 304 && cached !== undefined) return cached.body;
    if (!response.ok)
      throw new RuntimeRequestError(response.status, `${kind}: HTTP ${response.status} ${await response.text()}`);
    const body: unknown = await response.json();
    const etag = response.headers.get('etag');
    if (etag !== null) this.cache.set(url, { etag, body });
    return body;
  }
}

/**
 * Writes `bytes` as `dir/name`: a new file (never an existing one, which could be a symlink to follow) of mode
 * 0600, renamed into place, so a reader sees the old content or the new one and a symlink there is replaced.
 */
async function writeOwnerOnly(dir: string, name: string, bytes: Buffer): Promise<void> {
  // Plain names never start with '.' on the server, so the temporary name cannot be another file's.
  const temporary = join(dir, `.${name}.${randomUUID()}.tmp`);
  try {
    await writeFile(temporary, bytes, { mode: 0o600, flag: 'wx' });
    await rename(temporary, join(dir, name));
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
