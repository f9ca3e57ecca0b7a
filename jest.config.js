/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/installed/ runs as `npm run test:installed` (minutes: it packs and installs into a fresh cdk init app).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/installed/'],
  // Type checking happens once for the whole project in `npm test` (tsc); here we only transpile: tsconfig.json's
  // options with isolatedModules, which makes ts-jest transpile each file alone (ts-jest 29 deprecates its own
  // isolatedModules option for this compiler option).
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60_000,
  maxWorkers: 2,
  // The slowest suites start first, so no worker runs a long one alone at the end (test/slow-suites-first.js).
  testSequencer: '<rootDir>/test/slow-suites-first.js',
};
