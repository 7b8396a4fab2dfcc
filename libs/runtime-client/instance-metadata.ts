/** The instance a runtime registers as, and what it may change while registered (DESIGN 8 and 11). */
export interface RuntimeInstance {
  readonly address?: string;
  readonly port?: number;
  readonly protocol?: 'http' | 'https' | 'ws' | 'wss';
  readonly version?: string;
  readonly tags?: Readonly<Record<string, string>>;
}

/** The fields `service/update_metadata` changes; an omitted one stays as it is, `tags` replaces the map. */
export type MetadataUpdate = Pick<RuntimeInstance, 'version' | 'protocol' | 'port' | 'tags'>;

const PROTOCOLS: readonly string[] = ['http', 'https', 'ws', 'wss'];
// The controller's rules for these fields (apps/controller/registry/dto/register.params.ts), restated here
// so the runtime hears of a mistake: the controller drops an invalid notification without an answer.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const MAX_TAGS = 100;

/** The first rule `update` breaks, as a sentence; undefined when the controller will take it. */
export function metadataProblem(update: MetadataUpdate): string | undefined {
  const { version, protocol, port, tags } = update as Record<string, unknown>;
  if (version !== undefined && (typeof version !== 'string' || version.length > 100 || CONTROL.test(version))) {
    return 'version must be a string of at most 100 characters without control characters';
  }
  if (protocol !== undefined && (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol))) {
    return `protocol must be one of ${PROTOCOLS.join(', ')}`;
  }
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) {
    return 'port must be an integer from 1 to 65535';
  }
  if (tags === undefined) return undefined;
  const entries = typeof tags === 'object' && tags !== null && !Array.isArray(tags) ? Object.entries(tags) : undefined;
  const badTag = ([key, value]: [string, unknown]): boolean =>
    key.length < 1 || key.length > 128 || CONTROL.test(key) || typeof value !== 'string' || value.length > 1024;
  if (entries === undefined || entries.length > MAX_TAGS || entries.some(badTag)) {
    return `tags must be an object of at most ${MAX_TAGS} string values (keys 1..128 characters, values up to 1024)`;
  }
  if (entries.some(([, value]) => CONTROL_IN_TEXT.test(value as string))) {
    return 'tag values must not contain control characters other than tab and line breaks';
  }
  return undefined;
}

/**
 * The instance as the runtime is now: its configured fields with every `updateMetadata` since laid over them.
 * Each re-registration after a reconnect sends it whole, so no controller holds values older than the
 * latest update, and the registration keeps its identity (address and current port) and so its id.
 */
export class InstanceMetadata {
  private instance: RuntimeInstance;
  /** Every field `updateMetadata` has set so far, as the notification would carry them. */
  private updated: Record<string, unknown> = {};

  constructor(configured: RuntimeInstance = {}) {
    this.instance = { ...configured };
  }

  /** The notification's params that restate every update so far; undefined before the first. */
  get updates(): Record<string, unknown> | undefined {
    return Object.keys(this.updated).length === 0 ? undefined : this.updated;
  }

  /** What to register as now. */
  get current(): RuntimeInstance {
    return this.instance;
  }

  /** Lays `update` over the instance (after checking it); answers the notification's params, the fields given. */
  apply(update: MetadataUpdate): Record<string, unknown> {
    const problem = metadataProblem(update);
    if (problem !== undefined) throw new TypeError(`updateMetadata: ${problem}`);
    const params = Object.fromEntries(
      (['version', 'protocol', 'port', 'tags'] as const).flatMap((field) =>
        update[field] === undefined ? [] : [[field, update[field]]],
      ),
    );
    this.instance = { ...this.instance, ...params };
    this.updated = { ...this.updated, ...params };
    return params;
  }
}
