import {
  KV_TRUTH_END,
  KV_TRUTH_START,
  kvTruthScenarios,
  parseKvTruthArgs,
  runKvTruthBench,
} from '../../../router/bench/kv-truth';

describe('when bench:kv-truth parses its flags', () => {
  test.each([
    [[], { quick: false, seeds: 1 }],
    [['--quick'], { quick: true, seeds: 1 }],
    [['--seeds', '1'], { quick: false, seeds: 1 }],
    [['--quick', '--seeds', '20'], { quick: true, seeds: 20 }],
  ])('GIVEN %j THEN it reads %j', (argv, expected) => {
    expect(parseKvTruthArgs(argv)).toEqual(expected);
  });

  test.each([['0'], ['21'], ['2.5'], [undefined]])('GIVEN --seeds %s THEN it is refused naming the range', (raw) => {
    const argv = raw === undefined ? ['--seeds'] : ['--seeds', raw];
    expect(() => parseKvTruthArgs(argv)).toThrow(
      `--seeds must be an integer between 1 and 20 (got ${JSON.stringify(raw ?? '')})`,
    );
  });

  test('GIVEN an unknown flag THEN the usage names it', () => {
    expect(() => parseKvTruthArgs(['--seed', '2'])).toThrow(/unknown flag "--seed"/);
  });
});

describe('when bench:kv-truth runs at two seeds (smoke size)', () => {
  test('GIVEN seeds 1 and 2 THEN the section has seed 1 tables and a ratio per events row and seed', async () => {
    const bySeed = [1, 2].map((seed) => kvTruthScenarios(3, seed).filter((s) => s.key === 'restart'));
    expect(bySeed[1][0].spec).toContain('seed=2');
    expect(bySeed[1][0].settings.seed).toBe(2);
    const section = await runKvTruthBench(bySeed, 'test');
    expect(section.startsWith(KV_TRUTH_START) && section.endsWith(KV_TRUTH_END)).toBe(true);
    expect(section).toContain("seeds 1, 2 (the workload's and the run's; the scenario tables are seed 1's)");
    expect(section).toContain("### P90 ÷ the estimate's at seeds 1–2");
    expect(section).toContain('| strategy | seed 1 | seed 2 | geometric mean |');
    const ratioRows = section.split('\n').filter((l) => /^\| cache-aware \+ events[^|]*(\| [\d.]+× ){3}\|$/.test(l));
    expect(ratioRows).toHaveLength(4);
    expect(section).toMatch(/- Events rows worse than the estimate at P90: (none|.*seed [12])/);
  });
});
