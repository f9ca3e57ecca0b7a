/** @type {import('jest').Config} */
module.exports = {
  // Jest's node environment with one CloudFormation template validator per worker instead of one per suite (about
  // 3.4 s of CPU each): aws-cdk-lib's require of the validator gets the worker's (test/shared-validator-environment.js).
  testEnvironment: '<rootDir>/test/shared-validator-environment.js',
  moduleNameMapper: { '^@aws/cloudformation-validate$': '<rootDir>/test/shared-cloudformation-validator.js' },
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
  // Three workers on CI's two cores: the suites wait on child processes, loopback servers and timers, so two workers
  // kept about 1.6 cores busy. Measured on a clean clone here: npm test 11 min 42 s with 2, 9 min 41 s with 3.
  maxWorkers: 3,
  // The slowest suites start first, so no worker runs a long one alone at the end (test/slow-suites-first.js).
  testSequencer: '<rootDir>/test/slow-suites-first.js',
};
