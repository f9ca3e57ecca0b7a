/**
 * Jest's test order with the slowest suites first. Jest orders suites by their recorded durations when its cache has
 * them, and otherwise by file size, largest first: on a fresh clone (CI) a short file that runs for minutes, such as
 * the documented commands, then starts near the end and one worker finishes it alone while the other idles. Suites
 * without a recorded duration that are listed here start first, in this order; the rest keep Jest's order.
 */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The longest suites of a clean-clone `npm test` on the 2-core development machine (Jest's recorded durations,
 * 2026-12-06), longest first; test/slow-suites-first.test.ts checks that each still exists.
 */
const SLOW_SUITES = [
  'test/docs/documented-commands.test.ts',
  'test/package/npm-pack.test.ts',
  'test/router/aws/ab-shadow.test.ts',
  'test/router/plan/planner.test.ts',
  'test/router/plan/plan-command.test.ts',
  'test/lib/aws-rules.test.ts',
  'test/router/container/container-sagemaker-mode.test.ts',
  'test/router/aws/ab-faults.test.ts',
  'test/router/plan/planned-app.test.ts',
];

class SlowSuitesFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) =>
      test.duration == null ? SLOW_SUITES.indexOf(relative(test.context.config.rootDir, test.path)) : -1;
    const slow = sorted.filter((t) => rank(t) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...slow, ...sorted.filter((t) => rank(t) < 0)];
  }
}

module.exports = SlowSuitesFirst;
module.exports.SLOW_SUITES = SLOW_SUITES;
