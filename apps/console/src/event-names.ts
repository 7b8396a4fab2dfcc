import { ApiError, request } from './api.js';

/** A change-feed event as `GET /events` answers it (DESIGN 12). */
export interface ChangeEvent {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly actor: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

const idsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : [];

/** An entity's id and name in an event: `schemaId` / `schemaName`, a document's `title`; link events carry `entityId`. */
function entityOf(data: Readonly<Record<string, unknown>>): { type: string; id: string; name: string | undefined } {
  const type = text(data.entityType) ?? 'entity';
  return {
    type,
    id: text(data.entityId) ?? text(data[`${type}Id`]) ?? '?',
    name: text(data[`${type}Name`]) ?? text(data.title),
  };
}

/**
 * The names behind the ids in events, cached for the page's life: learned from the feed itself (tag and entity
 * events carry names) and, for tag ids the feed never named, from `GET /tags/{tagId}` once each. A tag the api
 * does not show (deleted, or on a host the caller cannot see) stays unnamed and is shown by its id.
 */
export class EventNames {
  private readonly tags = new Map<string, string | null>();
  private readonly entities = new Map<string, string>();
  private readonly asked = new Map<string, Promise<void>>();

  constructor(
    private readonly token: string,
    private readonly signal: AbortSignal,
  ) {}

  learn(events: readonly ChangeEvent[]): void {
    for (const { type, data } of events) {
      const tagId = text(data.tagId);
      const tagName = text(data.tagName);
      if (type.startsWith('tag.') && tagId !== undefined && tagName !== undefined) this.tags.set(tagId, tagName);
      const entity = entityOf(data);
      if (type.startsWith('entity.') && entity.name !== undefined)
        this.entities.set(`${entity.type}/${entity.id}`, entity.name);
    }
  }

  /** Asks the api for the tag ids of `events` not yet named; resolves when every answer is in. */
  async resolve(events: readonly ChangeEvent[]): Promise<void> {
    const unknown = new Set(events.flatMap((event) => idsOf(event.data.tagIds)).filter((id) => !this.tags.has(id)));
    await Promise.all([...unknown].map((tagId) => this.ask(tagId)));
  }

  private ask(tagId: string): Promise<void> {
    let pending = this.asked.get(tagId);
    if (pending === undefined) {
      pending = request<{ tagName: string }>(this.token, 'GET', `/tags/${encodeURIComponent(tagId)}`, {
        signal: this.signal,
      }).then(
        ({ body }) => {
          this.tags.set(tagId, body.tagName);
        },
        (error: unknown) => {
          // Not there for this caller: shown by id from now on. Anything else (a lost connection) asks again later.
          if (error instanceof ApiError && error.status < 500) this.tags.set(tagId, null);
          this.asked.delete(tagId);
        },
      );
      this.asked.set(tagId, pending);
    }
    return pending;
  }

  private tag(tagId: string): string {
    const name = this.tags.get(tagId);
    return name === undefined || name === null ? `tag ${tagId}` : `“${name}”`;
  }

  private entity(data: Readonly<Record<string, unknown>>): string {
    const { type, id, name } = entityOf(data);
    const known = name ?? this.entities.get(`${type}/${id}`);
    return known === undefined ? `${type} ${id}` : `${type} “${known}”`;
  }

  /** One sentence for the event, with names where they are known. */
  describe(event: ChangeEvent): string {
    const { data } = event;
    const tags = idsOf(data.tagIds).map((id) => this.tag(id));
    const list = tags.length === 0 ? 'no tag you can see' : tags.join(', ');
    const tagName = text(data.tagName);
    const tag = tagName === undefined ? this.tag(text(data.tagId) ?? '?') : `“${tagName}”`;
    switch (event.type) {
      case 'tag.created':
        return `Created tag ${tag}`;
      case 'tag.updated':
        return `Updated tag ${tag}`;
      case 'tag.deleted':
        return `Deleted tag ${tag}`;
      case 'entity.created':
        return `Created ${this.entity(data)}`;
      case 'entity.updated':
        return `Updated ${this.entity(data)}`;
      case 'entity.deleted':
        return `Deleted ${this.entity(data)}`;
      case 'entity.tagged':
        return `Tagged ${this.entity(data)} with ${list}`;
      case 'entity.untagged':
        return `Removed ${list} from ${this.entity(data)}`;
      case 'config.changed':
        return configChange(data);
      default:
        return JSON.stringify(data);
    }
  }
}

/** `config.changed` (DESIGN 14): the layer's address, its new version and the names that changed, never values. */
function configChange(data: Readonly<Record<string, unknown>>): string {
  const owner =
    text(data.serviceId) ?? [text(data.productId), text(data.productVersion)].filter((p) => p !== undefined).join(' ');
  const env = text(data.envTag);
  const keys = Array.isArray(data.keys) ? data.keys.filter((k): k is string => typeof k === 'string') : [];
  const layer = `${text(data.host) ?? '?'} / ${owner}${env === undefined ? '' : ` / ${env}`}`;
  const version = typeof data.version === 'number' ? ` (version ${data.version})` : '';
  return `Changed config ${layer}${version}: ${keys.length === 0 ? 'nothing' : keys.join(', ')}`;
}
