import { Injectable } from '@nestjs/common';
import { ChangeEventRepository, EntityLinkRepository, UnitOfWork, type NewChangeEvent, type Tx } from '#database';
import { conflict, ID_PATTERN, notFound, ProblemException } from '#platform';
import type { Principal } from '#token-binding';
import { writableRow } from '../common/access-checks.js';
import { visibilityOf } from '../common/host-access.js';
import { linkEvents } from '../events/change-events.js';
import type { TagBatchOperationDto } from './dto/tag-batch.dto.js';
import { EntitiesService } from './entities.service.js';
import { assertLinkable, knownTags, tagChange, type RequestedTags } from './tag-links.js';
import { ENTITY_TYPES, nameOf, written, type EntityTypeDefinition } from './entity-types.js';
import { sortedIds } from './entity.view.js';
import type { TagBatchResultView, TagBatchView } from './tag-batch.view.js';

/** One entity of a batch as it stands after the operations worked out so far. */
interface EntityState {
  readonly def: EntityTypeDefinition;
  readonly id: string;
  readonly hostId: string | null;
  readonly aggregateVersion: number;
  /** Its links when locked (every host's tags), and as the operations so far leave them. */
  readonly before: ReadonlySet<string>;
  readonly linked: Set<string>;
  /** The audit fields and version of its last effective operation; undefined while none changed it. */
  written?: ReturnType<typeof written>;
}

/**
 * `POST /tags/batch` (DESIGN 12) in a fixed number of statements whatever the number of operations: the
 * tags of every operation are looked up (and locked) in one, the entities locked in one, their links read
 * in one; each operation's outcome is then worked out here, in request order, with the rules of the single
 * writes (`writableRow`, `knownTags`, `tagChange`), a failed operation changing nothing; the net link
 * changes and version bumps are one statement and the change events another. Every operation commits
 * with the others, which is one of the orders in which separate transactions could have committed. With
 * `atomic`, the first failure is a 409 naming its index, and nothing is written.
 */
@Injectable()
export class TagBatchService {
  constructor(
    private readonly entities: EntitiesService,
    private readonly links: EntityLinkRepository,
    private readonly events: ChangeEventRepository,
    private readonly work: UnitOfWork,
  ) {}

  apply(principal: Principal, operations: readonly TagBatchOperationDto[], atomic: boolean): Promise<TagBatchView> {
    return this.work.run(async (tx) => {
      const { tags, states } = await this.lock(tx, principal, operations);
      const events: NewChangeEvent[] = [];
      const results: TagBatchResultView[] = [];
      for (const [index, operation] of operations.entries()) {
        try {
          events.push(...applyOne(principal, operation, tags, states));
          results.push({ index, status: 200 });
        } catch (error) {
          // A refusal of the single write's rules is this operation's result; anything else fails the request.
          if (!(error instanceof ProblemException)) throw error;
          if (atomic) {
            throw conflict(
              `operation ${index} failed (${error.getStatus()}): ${String(error.message)}; nothing was written`,
            );
          }
          results.push({ index, status: error.getStatus(), detail: String(error.message) });
        }
      }
      await this.write(tx, [...states.values()], events);
      return { results };
    });
  }

  /**
   * Every operation's tags (locked for key share), then every entity named by a well-formed id that the caller
   * can see (locked for update, in type then id order; another host's is not waited for, and is 404 like a
   * missing one), then their links: tags before entities, as every tagging write does.
   */
  private async lock(
    tx: Tx,
    principal: Principal,
    operations: readonly TagBatchOperationDto[],
  ): Promise<{ tags: RequestedTags; states: Map<string, EntityState> }> {
    const tags = await this.entities.requestedTags(
      tx,
      principal,
      operations.flatMap((operation) => operation.tagIds),
    );
    const links = this.links.in(tx);
    const locked = await links.lockEntities(
      ENTITY_TYPES.map((def) => ({
        table: def,
        ids: sortedIds(
          operations
            .filter((operation) => operation.entityType === def.entityType && ID_PATTERN.test(operation.entityId))
            .map((operation) => operation.entityId),
        ),
      })),
      visibilityOf(principal),
    );
    const linked = await links.linksOfMany(
      locked.map((row) => row.entityType),
      locked.map((row) => row.entityId),
    );
    const linksOf = new Map(linked.map((row) => [keyOf(row.entityType, row.entityId), row.tagIds]));
    const states = new Map<string, EntityState>();
    for (const row of locked) {
      const key = keyOf(row.entityType, row.entityId);
      const before = new Set(linksOf.get(key) ?? []);
      const def = definitionOf(row.entityType);
      states.set(key, { ...row, def, id: row.entityId, before, linked: new Set(before) });
    }
    return { tags, states };
  }

  /** The net link changes and new versions of `states` in one statement, then the events in order. */
  private async write(tx: Tx, states: readonly EntityState[], events: readonly NewChangeEvent[]): Promise<void> {
    const changed = states.flatMap((state) => (state.written === undefined ? [] : [{ state, version: state.written }]));
    if (changed.length === 0) return;
    const link = (state: EntityState, tagId: string) => ({
      entityType: state.def.entityType,
      entityId: state.id,
      tagId,
    });
    await this.links.in(tx).applyBatch(ENTITY_TYPES, {
      removed: changed.flatMap(({ state }) =>
        [...state.before].filter((tagId) => !state.linked.has(tagId)).map((tagId) => link(state, tagId)),
      ),
      added: changed.flatMap(({ state }) =>
        [...state.linked]
          .filter((tagId) => !state.before.has(tagId))
          .map((tagId) => ({ ...link(state, tagId), entityHostId: state.hostId })),
      ),
      versions: changed.map(({ state, version }) => ({
        entityType: state.def.entityType,
        entityId: state.id,
        ...version,
      })),
    });
    await this.events.in(tx).append(events);
  }
}

/**
 * One operation against the entities' state so far, with the single write's rules in its order (404 for an
 * id that cannot exist or an entity the caller cannot see, 403, 400 for unknown tags or, when adding, tags
 * the entity's host cannot see, 400 over the cap):
 * updates `states` and answers the operation's events, or throws its refusal having changed nothing.
 */
function applyOne(
  principal: Principal,
  operation: TagBatchOperationDto,
  tags: RequestedTags,
  states: ReadonlyMap<string, EntityState>,
): NewChangeEvent[] {
  const def = definitionOf(operation.entityType);
  const id = checkedId(operation);
  const state = writableRow(principal, nameOf(def), id, states.get(keyOf(def.entityType, id)) ?? null, { any: true });
  const known = knownTags({ ids: sortedIds(operation.tagIds), hosts: tags.hosts });
  if (operation.op === 'add') assertLinkable(state.hostId, known);
  const tagIds = known.map((tag) => tag.tagId);
  const { added, removed } = tagChange(def, id, operation.op, tagIds, state.linked);
  if (added.length === 0 && removed.length === 0) return [];
  for (const tagId of added) state.linked.add(tagId);
  for (const tagId of removed) state.linked.delete(tagId);
  state.written = written(principal, (state.written?.aggregateVersion ?? state.aggregateVersion) + 1);
  return linkEvents(principal, def, id, state.hostId, added, removed);
}

const keyOf = (entityType: string, entityId: string): string => `${entityType}\u0000${entityId}`;

function definitionOf(entityType: string): EntityTypeDefinition {
  const def = ENTITY_TYPES.find((d) => d.entityType === entityType);
  if (def === undefined) throw new Error(`unknown entity type ${entityType} passed validation`);
  return def;
}

/** An id that cannot exist is not found, as on the single routes. */
function checkedId(operation: TagBatchOperationDto): string {
  if (!ID_PATTERN.test(operation.entityId)) {
    throw notFound(`No ${operation.entityType} with id ${operation.entityId.slice(0, 40)}`);
  }
  return operation.entityId;
}
