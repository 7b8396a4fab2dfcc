import { AsyncLocalStorage } from 'node:async_hooks';
import { scrubSqlMessage } from '#platform';
import type { Logger as TypeOrmLogger } from 'typeorm';

type Listener = (sql: string) => void;

/**
 * Sees every SQL statement TypeORM sends. It lets tests prove that a rejected request never reached
 * the database, and costs one increment per query in production.
 */
class QueryObserver {
  private total = 0;
  private readonly listeners = new Set<Listener>();
  private readonly caused = new AsyncLocalStorage<string[]>();

  get count(): number {
    return this.total;
  }

  record(sql: string): void {
    this.total += 1;
    this.caused.getStore()?.push(sql);
    for (const listener of this.listeners) listener(sql);
  }

  /**
   * Runs `action` and returns the statements it caused: those sent from its async context, so a timer
   * firing meanwhile (the change-feed pruner) is not counted against it.
   */
  async during<T>(action: () => PromiseLike<T>): Promise<{ result: T; statements: string[] }> {
    const statements: string[] = [];
    // Awaited inside the scope: a lazy thenable (light-my-request's inject) starts its work only when awaited.
    const result = await this.caused.run(statements, async () => await action());
    return { result, statements };
  }

  /** Calls `listener` for every statement until the returned function is called. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export const queryObserver = new QueryObserver();

export interface SqlErrorSink {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** TypeORM logger that counts queries and forwards only failures and warnings to the app's logger. */
export class ObservingTypeOrmLogger implements TypeOrmLogger {
  constructor(private readonly sink?: SqlErrorSink) {}

  logQuery(query: string): void {
    queryObserver.record(query);
  }

  logQueryError(error: string | Error, query: string): void {
    // Parameters and the message's quoted values are left out: they may carry certificates or secrets.
    const message = error instanceof Error ? error.message : error;
    const code = typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
    this.sink?.error({ code, reason: scrubSqlMessage(message), query }, 'query failed');
  }

  logQuerySlow(time: number, query: string): void {
    this.sink?.warn({ durationMs: time, query }, 'slow query');
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.sink?.warn({ migration: message }, 'migration');
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.sink?.warn({ detail: message }, 'typeorm warning');
  }
}
