import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { describeConfigChange } from './events.js';
import { configDiff } from './runtime-client.js';

const seed = process.env.FC_SEED === undefined ? Date.now() : Number(process.env.FC_SEED);

describe('configDiff', () => {
  it('splits the keys into added, changed and removed; unchanged ones appear nowhere', () => {
    const value = fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 }));
    const config = fc.dictionary(fc.constantFrom('a.x', 'a.y', 'b.x', 'b.y', 'c.z'), value);
    try {
      fc.assert(
        fc.property(config, config, (before, after) => {
          const diff = configDiff(before, after);
          const same = (key: string) => JSON.stringify(before[key]) === JSON.stringify(after[key]);
          expect(diff.added).toEqual(
            Object.keys(after)
              .filter((k) => !(k in before))
              .sort(),
          );
          expect(diff.removed).toEqual(
            Object.keys(before)
              .filter((k) => !(k in after))
              .sort(),
          );
          expect(diff.changed).toEqual(
            Object.keys(after)
              .filter((k) => k in before && !same(k))
              .sort(),
          );
          expect(Object.keys(diff.previous).sort()).toEqual([...diff.changed, ...diff.removed].sort());
          for (const key of Object.keys(diff.previous)) expect(diff.previous[key]).toEqual(before[key]);
        }),
        { seed, numRuns: 300 },
      );
    } catch (error) {
      process.stderr.write(`configDiff property failed with FC_SEED=${seed}\n`);
      throw error;
    }
  });

  it('compares lists and maps by value', () => {
    expect(configDiff({ 'a.l': [1, 2], 'a.m': { k: 1 } }, { 'a.l': [1, 2], 'a.m': { k: 2 } })).toEqual({
      added: [],
      changed: ['a.m'],
      removed: [],
      previous: { 'a.m': { k: 1 } },
    });
  });
});

describe('describeConfigChange', () => {
  it('one line per change, naming the version or the reconnect', () => {
    const values = { 'server.httpPort': 9443, 'server.tls': true };
    const diff = configDiff({ 'server.httpPort': 8443, 'server.name': 'shop' }, values);
    expect(describeConfigChange({ values, ...diff, cause: { type: 'pushed', version: 7 } })).toBe(
      'config changed (version 7): server.httpPort 8443 → 9443, server.tls added (true), server.name removed',
    );
    expect(describeConfigChange({ values, ...diff, cause: { type: 'reconnected' } })).toMatch(
      /^config changed while disconnected: server\.httpPort 8443 → 9443/,
    );
  });
});
