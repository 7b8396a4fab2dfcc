import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { uniqueViolation } from './pg-errors.js';

const MANAGERS = new WeakMap<Tx, EntityManager>();
const AFTER_COMMIT = new WeakMap<Tx, (() => void)[]>();

/** Runs `callback` once `tx` has committed (never when it rolls back); repositories use it for side effects. */
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

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const committed: (() => void)[] = [];
    const result = await this.db.transaction((manager) => {
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
 * rows plus those of one host (`host` null: global rows only).
 */
export type HostScope = { readonly allHosts: true } | { readonly allHosts: false; readonly host: string | null };

/** Binds `value` as the next parameter of `parameters`; returns its placeholder (`$n`). */
export function bind(parameters: unknown[], value: unknown): string {
  return `$${parameters.push(value)}`;
}

/**
 * The rows of `scope` as a raw SQL condition on `column` (`and `-prefixed, or empty for every host), its
 * host bound into `parameters`: the statement form of `whereInScope`.
 */
export function scopeCondition(scope: HostScope, column: string, parameters: unknown[]): string {
  if (scope.allHosts) return '';
  if (scope.host === null) return `and ${column} is null`;
  return `and (${column} is null or ${column} = ${bind(parameters, scope.host)})`;
}

/** Restricts a query to the rows of `scope`; `column` is the alias-qualified host id column. */
export function whereInScope<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  scope: HostScope,
  column: string,
): SelectQueryBuilder<T> {
  if (scope.allHosts) return query;
  if (scope.host === null) return query.andWhere(`${column} is null`);
  return query.andWhere(`(${column} is null or ${column} = :scopeHost)`, { scopeHost: scope.host });
}

/** What every repository shares: the data source, and the same repository bound to a transaction. */
export abstract class BaseRepository {
  protected manager: EntityManager;
  /** The transaction this copy is bound to (`in(tx)`), if any. */
  protected tx: Tx | undefined;

  constructor(protected readonly db: DataSource) {
    this.manager = db.manager;
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
