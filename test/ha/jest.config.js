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
  testTimeout: 300_000,
};
