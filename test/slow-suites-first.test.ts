import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** The fields of a Jest test the sequencer reads. */
interface Suite {
  readonly path: string;
  readonly duration?: number;
  readonly context: {
    readonly config: { readonly rootDir: string; readonly cache: boolean };
    readonly hasteFS: { getSize(path: string): number };
  };
}
interface SequencerModule {
  new (options: object): { sort(tests: Suite[]): Suite[] };
  SLOW_SUITES: readonly string[];
}
const SlowSuitesFirst = require('./slow-suites-first') as SequencerModule;

/** A test as Jest hands it to a sequencer: no recorded duration (no cache), `size` bytes on disk. */
function suite(path: string, size: number): Suite {
  return {
    path: join(ROOT, path),
    context: { config: { rootDir: ROOT, cache: false }, hasteFS: { getSize: () => size } },
  };
}

describe('when Jest orders the suites', () => {
  test('GIVEN the root config THEN it uses the slow-suites-first sequencer, and every suite it lists exists', () => {
    expect(readFileSync(join(ROOT, 'jest.config.js'), 'utf8')).toContain(
      "testSequencer: '<rootDir>/test/slow-suites-first.js'",
    );
    expect(SlowSuitesFirst.SLOW_SUITES.length).toBeGreaterThan(0);
    for (const path of SlowSuitesFirst.SLOW_SUITES)
      expect({ path, exists: existsSync(join(ROOT, path)) }).toEqual({ path, exists: true });
  });

  test('GIVEN no recorded durations THEN the listed suites come first in list order, the rest largest file first', () => {
    const [first, second] = SlowSuitesFirst.SLOW_SUITES;
    const tests = [
      suite('test/a-small.test.ts', 10),
      suite(second, 1),
      suite('test/a-large.test.ts', 1000),
      suite(first, 2),
    ];
    const sorted = new SlowSuitesFirst({}).sort(tests).map((t) => t.path.slice(ROOT.length + 1));
    expect(sorted).toEqual([first, second, 'test/a-large.test.ts', 'test/a-small.test.ts']);
  });
});
