/** `npm run test:ha` (DESIGN 15): the real Patroni, etcd, HAProxy and PgBouncer; not part of `npm test`. */
import base from '../../jest.config.js';

export default {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/ha/**/*.ha.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  reporters: ['default'],
  maxWorkers: 1,
  // Runs in band as before: a memory limit would make jest start a worker even for one.
  workerIdleMemoryLimit: undefined,
  testTimeout: 300_000,
};
