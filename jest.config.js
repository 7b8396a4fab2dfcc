/** Jest in ESM mode (NestJS 12 is ESM-only); ts-jest transpiles each file in isolation. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }],
    // @fastify/static (the /docs page) require()s this ESM-only package; Node 20 can, jest cannot.
    '/node_modules/content-disposition/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  moduleNameMapper: {
    '^#token-binding$': '<rootDir>/libs/token-binding/index.ts',
    '^#database$': '<rootDir>/libs/database/index.ts',
    '^#platform$': '<rootDir>/libs/platform/index.ts',
    '^#runtime-client$': '<rootDir>/libs/runtime-client/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  maxWorkers: 2,
  testTimeout: 60000,
};
