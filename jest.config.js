/** Jest in ESM mode (NestJS 12 is ESM-only); ts-jest transpiles each file in isolation. */

// From Node 22, jest loads a require()d ESM package itself; on Node 20 it cannot, so one is made CommonJS.
const JEST_REQUIRES_ESM = Number(process.versions.node.split('.')[0]) >= 22;

/** @fastify/static (the /docs page) require()s this ESM-only package; Node 20 can, jest on Node 20 cannot. */
const CONTENT_DISPOSITION_AS_CJS = {
  '/node_modules/content-disposition/.+\\.js$': [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } },
  ],
};

/**
 * Suites whose outcome does not depend on the database behind them (processes, fuzzing, the browser, docs and
 * deploy files, token handling): CI runs them once, and repeats the rest per backend with BINDERY_TESTS=database.
 */
const ONCE = [
  '/test/process/(?!database-restart|replicas-restart)',
  '/test/(fuzz|console)/',
  '/test/ops/(?!database-settings|readiness)',
  '/test/auth/(?!token-issuer)',
  '/test/binding/decision',
  '/test/security/(declarations|access\\.property)',
];
const TEST_SETS = { all: [], database: ONCE };
const testSet = process.env.BINDERY_TESTS ?? 'all';
// A mistyped set would silently run the wrong suites.
if (!Object.hasOwn(TEST_SETS, testSet)) throw new Error(`BINDERY_TESTS must be one of: ${Object.keys(TEST_SETS)}`);

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }],
    ...(JEST_REQUIRES_ESM ? {} : CONTENT_DISPOSITION_AS_CJS),
  },
  transformIgnorePatterns: [JEST_REQUIRES_ESM ? '/node_modules/' : '/node_modules/(?!content-disposition/)'],
  moduleNameMapper: {
    '^#token-binding$': '<rootDir>/libs/token-binding/index.ts',
    '^#database$': '<rootDir>/libs/database/index.ts',
    '^#platform$': '<rootDir>/libs/platform/index.ts',
    '^#registry$': '<rootDir>/libs/registry/index.ts',
    '^#runtime-client$': '<rootDir>/libs/runtime-client/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...TEST_SETS[testSet]],
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  maxWorkers: 2,
  // In ESM mode every test file's module graph stays in its worker's heap (jest#14605, node#63186): by the
  // end of a full run each worker held ~2.7 GB and took over a second to exit, past the 500 ms jest allows
  // before it force-exits a worker and warns of leaking tests. A worker past this after a file is replaced.
  workerIdleMemoryLimit: '512MB',
  testTimeout: 60000,
};
