import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { ObservingTypeOrmLogger, queryObserver } from './query-observer.js';

const logger = new ObservingTypeOrmLogger();

describe('queryObserver.during', () => {
  it('returns the statements its action sent, across awaits and timers it started', async () => {
    const { result, statements } = await queryObserver.during(async () => {
      logger.logQuery('select 1');
      // Across a timer, then from a callback it scheduled, awaited until it has run.
      await sleep(0);
      await new Promise<void>((ran) =>
        setImmediate(() => {
          logger.logQuery('select 2');
          ran();
        }),
      );
      return 'done';
    });
    expect(result).toBe('done');
    expect(statements).toEqual(['select 1', 'select 2']);
  });

  it('counts the work of a lazy thenable, which starts only when awaited (as app.inject does)', async () => {
    const lazy: PromiseLike<number> = {
      then(onFulfilled) {
        logger.logQuery('select 4');
        return Promise.resolve(4).then(onFulfilled);
      },
    };
    const { result, statements } = await queryObserver.during(() => lazy);
    expect(result).toBe(4);
    expect(statements).toEqual(['select 4']);
  });

  it('leaves out a statement sent meanwhile from a context it did not start', async () => {
    let sentTwice = (): void => undefined;
    const twice = new Promise<void>((resolve) => (sentTwice = resolve));
    let ticks = 0;
    const background = setInterval(() => {
      logger.logQuery('delete from change_event');
      if (++ticks === 2) sentTwice();
    }, 1);
    const before = queryObserver.count;
    try {
      const { statements } = await queryObserver.during(async () => {
        // The background statements are sent while this action runs.
        await twice;
        logger.logQuery('select 3');
      });
      expect(statements).toEqual(['select 3']);
      // The process-wide count saw the background statements too.
      expect(queryObserver.count - before).toBeGreaterThan(1);
    } finally {
      clearInterval(background);
    }
  });
});
