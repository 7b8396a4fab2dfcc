import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import { accessOf, cachedPlanChanged } from './access.js';
import { deadlocked, uniqueViolation } from './pg-errors.js';

const MANAGERS = new WeakMap<Tx, EntityManager>();
const AFTER_COMMIT = new WeakMap<Tx, (() => void)[]>();

/** Runs `callback` once `tx` has committed (never when it rolls back): side effects and caches of what it wrote. */
export function afterCommit(tx: Tx, callback: () => void): void {
  const callbacks = AFTER_COMMIT.get(tx);
  if (callbacks === undefined) throw new Error('not a transaction of UnitOfWork.run');
  callbacks.push(callback);
}

/** An open transaction, opaque to services: they hand it to repositories (`repository.in(tx)`), nothing else. */
export class Tx {
  private constructor() {}

  static of(manager: EntityManager): Tx {
    const tx = new Tx();
    MANAGERS.set(tx, manager);
    return tx;
  }
}

/** Starts transactions for services; one write of the API is one call of `run`. */
@Injectable()
export class UnitOfWork {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Runs `work` in one transaction. A statement that met `0A000` (a column added or dropped under its
   * prepared statement, DESIGN 15) aborted the transaction before anything of it committed: `work` runs
   * once more in a new one, its statements prepared again. So does a transaction PostgreSQL chose as a
   * deadlock's victim (`40P01`; counters of two writers on one shard, migration TagUsage): nothing of it committed.
   */
  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.once(work);
    } catch (error) {
      if (!cachedPlanChanged(error) && !deadlocked(error)) throw error;
      return this.once(work);
    }
  }

  private async once<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const committed: (() => void)[] = [];
    const settings = accessOf(this.db).transactionSettings();
    const result = await this.db.transaction(async (manager) => {
      // Transaction mode: the zone and timeout live as long as the transaction, never on the pooled session.
      if (settings !== undefined) await manager.query(settings.text, settings.values);
      const tx = Tx.of(manager);
      AFTER_COMMIT.set(tx, committed);
      return work(tx);
    });
    for (const callback of committed) callback();
    return result;
  }
}

/** A unique index or primary key refused a write: services answer it with 409, never check first. */
export class DuplicateKeyError extends Error {
  constructor(readonly constraint: string) {
    super(`duplicate key (${constraint})`);
    this.name = 'DuplicateKeyError';
  }
}

/** Rethrows a unique violation as `DuplicateKeyError`, anything else unchanged. */
export function duplicateKeyOf(error: unknown): unknown {
  const constraint = uniqueViolation(error);
  return constraint === undefined ? error : new DuplicateKeyError(constraint);
}

/**
 * Which hosts' rows a reader may see, as decided by a service's rule (DESIGN 4.3): every host, or global
 * rows plus those of one host (`host` null: global rows only). Not OAuth scopes: host visibility.
 */
export type HostVisibility = { readonly allHosts: true } | { readonly allHosts: false; readonly host: string | null };

/** Binds `value` as the next parameter of `parameters`; returns its placeholder (`$n`). */
export function bind(parameters: unknown[], value: unknown): string {
  return `$${parameters.push(value)}`;
}

/** The reader's host bound into `parameters` (its placeholder), or undefined when `visibility` names no host. */
export function bindHost(visibility: HostVisibility, parameters: unknown[]): string | undefined {
  return visibility.allHosts || visibility.host === null ? undefined : bind(parameters, visibility.host);
}

/**
 * The rows of `visibility` as a raw SQL condition on `column` (`and `-prefixed, or empty for every host),
 * `host` being the placeholder `bindHost` gave: the statement form of `whereVisible`.
 */
export function hostCondition(visibility: HostVisibility, column: string, host: string | undefined): string {
  if (visibility.allHosts) return '';
  if (host === undefined) return `and ${column} is null`;
  return `and (${column} is null or ${column} = ${host})`;
}

/** `hostCondition` with the host bound into `parameters` here. */
export function visibilityCondition(visibility: HostVisibility, column: string, parameters: unknown[]): string {
  return hostCondition(visibility, column, bindHost(visibility, parameters));
}

/** Restricts a query to the rows of `visibility`; `column` is the alias-qualified host id column. */
export function whereVisible<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  visibility: HostVisibility,
  column: string,
): SelectQueryBuilder<T> {
  if (visibility.allHosts) return query;
  if (visibility.host === null) return query.andWhere(`${column} is null`);
  return query.andWhere(`(${column} is null or ${column} = :visibleHost)`, { visibleHost: visibility.host });
}

/** What every repository shares: the data source, and the same repository bound to a transaction. */
export abstract class BaseRepository {
  protected manager: EntityManager;
  /** The transaction this copy is bound to (`in(tx)`), if any. */
  protected tx: Tx | undefined;

  constructor(protected readonly db: DataSource) {
    this.manager = db.manager;
  }

  /**
   * One statement through the access layer, named on session pools: in the bound transaction, or outside
   * one straight on the pool (skipping the query runner's acquire and release, about a tenth of a read's CPU).
   */
  protected async rows<T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
    const runner = this.tx === undefined ? undefined : this.manager.queryRunner;
    if (runner !== undefined) return accessOf(this.db).rowsIn<T>(runner, sql, parameters);
    return accessOf(this.db).rows<T>(sql, parameters);
  }

  /** This repository inside `tx`: its statements run in that transaction. */
  in(tx: Tx): this {
    const bound = Object.create(this) as this;
    const manager = MANAGERS.get(tx);
    if (manager === undefined) throw new Error('not an open transaction');
    bound.manager = manager;
    bound.tx = tx;
    return bound;
  }
}
