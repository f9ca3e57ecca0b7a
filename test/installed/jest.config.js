/**
 * `npm run test:installed`: the packages installed into a fresh `cdk init` app (installed-app.test.ts). Kept out of
 * `npm test`'s run by the root jest.config.js (it takes minutes); CI runs it from .ci/run.
 */
const base = require('../../jest.config.js');

module.exports = {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/test/installed'],
  testPathIgnorePatterns: [],
  maxWorkers: 1,
};
