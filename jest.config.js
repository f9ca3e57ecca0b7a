/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/installed/ runs as `npm run test:installed` (minutes: it packs and installs into a fresh cdk init app).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/installed/'],
  // Type checking happens once for the whole project in `npm test` (tsc); here we only transpile.
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
