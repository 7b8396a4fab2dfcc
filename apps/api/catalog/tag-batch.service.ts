import { Inject, Injectable } from '@nestjs/common';
import { UnitOfWork, type Tx } from '#database';
import { conflict, ID_PATTERN, notFound, ProblemException, SETTINGS, type Settings } from '#platform';
import type { Principal } from '#token-binding';
import type { TagBatchOperationDto } from './dto/tag-batch.dto.js';
import { EntitiesService } from './entities.service.js';
import { ENTITY_TYPES, type EntityTypeDefinition } from './entity-types.js';
import type { TagBatchResultView, TagBatchView } from './tag-batch.view.js';

/**
 * `POST /tags/batch` (DESIGN 12): each operation is `EntitiesService.changeTags`, the rules of the single
 * writes, in its own transaction; independent operations run a few at a time on the pool. With `atomic`
 * they share one transaction and the first failure undoes them all (409 naming its index).
 */
@Injectable()
export class TagBatchService {
  constructor(
    private readonly entities: EntitiesService,
    private readonly work: UnitOfWork,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async apply(
    principal: Principal,
    operations: readonly TagBatchOperationDto[],
    atomic: boolean,
  ): Promise<TagBatchView> {
    if (atomic) {
      await this.work.run(async (tx) => {
        for (const [index, operation] of operations.entries()) {
          try {
            await this.applyOne(tx, principal, operation);
          } catch (error) {
            if (!(error instanceof ProblemException)) throw error;
            throw conflict(
              `operation ${index} failed (${error.getStatus()}): ${String(error.message)}; nothing was written`,
            );
          }
        }
      });
      return { results: operations.map((_, index) => ({ index, status: 200 })) };
    }
    const results: TagBatchResultView[] = new Array<TagBatchResultView>(operations.length);
    // Operations on one entity wait for the earlier ones on it, so they take effect in request order.
    const previous = new Map<string, Promise<unknown>>();
    let next = 0;
    // A few operations at once, leaving pool connections for other requests.
    const lanes = Math.max(1, Math.min(8, this.settings.dbPoolSize - 2));
    const lane = async (): Promise<void> => {
      while (next < operations.length) {
        const index = next++;
        const operation = operations[index];
        const key = `${operation.entityType}\u0000${operation.entityId}`;
        const turn = (previous.get(key) ?? Promise.resolve()).then(async () => {
          results[index] = await this.one(principal, index, operation);
        });
        previous.set(key, turn);
        await turn;
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return { results };
  }

  /** One operation in `tx`: the single write's rules through `EntitiesService.changeTags`. */
  private applyOne(tx: Tx, principal: Principal, operation: TagBatchOperationDto): Promise<void> {
    const def = definitionOf(operation);
    return this.entities.changeTags(tx, def, principal, checkedId(operation), operation.op, operation.tagIds);
  }

  private async one(principal: Principal, index: number, operation: TagBatchOperationDto): Promise<TagBatchResultView> {
    try {
      await this.work.run((tx) => this.applyOne(tx, principal, operation));
      return { index, status: 200 };
    } catch (error) {
      // A refusal of the single write's rules is this operation's result; anything else fails the request.
      if (!(error instanceof ProblemException)) throw error;
      return { index, status: error.getStatus(), detail: String(error.message) };
    }
  }
}

function definitionOf(operation: TagBatchOperationDto): EntityTypeDefinition {
  const def = ENTITY_TYPES.find((d) => d.entityType === operation.entityType);
  if (def === undefined) throw new Error(`unknown entity type ${operation.entityType} passed validation`);
  return def;
}

/** An id that cannot exist is not found, as on the single routes. */
function checkedId(operation: TagBatchOperationDto): string {
  if (!ID_PATTERN.test(operation.entityId)) {
    throw notFound(`No ${operation.entityType} with id ${operation.entityId.slice(0, 40)}`);
  }
  return operation.entityId;
}
