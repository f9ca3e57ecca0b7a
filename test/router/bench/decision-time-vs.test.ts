import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type * as DecisionTimeVs from '../../../router/bench/decision-time-vs';
import { median } from '../../../router/src/report/stats';
import { compiledDist, compiledModule } from '../../compiled-dist';

// The plumbing of the decision-time comparison, on a tiny batch; no timing is asserted (timings are the bench's
// output, measured on a quiet machine, not a unit test's).
const bench = compiledModule<typeof DecisionTimeVs>('router/bench/decision-time-vs');
const BENCH_JS = join(compiledDist(), 'router', 'bench', 'decision-time-vs.js');

describe('when decision-time-vs compares a build with itself (A/A)', () => {
  const dist = compiledDist();

  test.each([false, true])(
    'GIVEN --model-step %s THEN each side of each round runs in a fresh process, times every cell and decides alike',
    async (withModelStep) => {
      const rounds = 3;
      const batch = 500;
      const comparison = await bench.compareTrees({
        beforeDist: dist,
        afterDist: dist,
        policies: ['random', 'round-robin'],
        batch,
        rounds,
        withModelStep,
      });
      const { before, after, cells } = comparison;
      // A fresh process per side and round.
      expect(before.pids).toHaveLength(rounds);
      expect(after.pids).toHaveLength(rounds);
      expect(new Set([...before.pids, ...after.pids, process.pid]).size).toBe(2 * rounds + 1);
      expect([before.dist, after.dist]).toEqual([dist, dist]);
      // The same seeded policies on the same snapshots read the same instances, warm-up included.
      expect(before.consumed).toBeGreaterThan(0);
      expect(after.consumed).toBe(before.consumed);
      expect(cells.map((c) => c.label)).toEqual(
        ['random', 'round-robin'].flatMap((p) => bench.INSTANCE_COUNTS.map((n) => `${p} @ ${n}`)),
      );
      for (const c of cells) {
        for (const side of [c.before, c.after]) {
          expect(side.nanos).toHaveLength(rounds);
          for (const ns of side.nanos) expect(ns).toBeGreaterThanOrEqual(0);
          expect(side.decisions).toBe(rounds * batch);
          expect(side.scavengesPerMillion).toBeGreaterThanOrEqual(0);
        }
        expect(c.ratio).toBe(median(c.after.nanos.map((a, r) => a / c.before.nanos[r])));
        expect(bench.cellLine(c)).toMatch(
          new RegExp(
            `^${c.label}: before [\\d.]+ ns, after [\\d.]+ ns \\(minimum batch means: ([\\d.]+|NaN|Infinity)×\\), median of round ratios ([\\d.]+|NaN|Infinity)×; scavenges per million decisions: before [\\d.]+, after [\\d.]+$`,
          ),
        );
      }
    },
  );

  test('GIVEN the command line THEN it prints a line per cell and the load average, exit code 0', () => {
    const run = spawnSync(
      process.execPath,
      [BENCH_JS, dist, '--policies', 'least-outstanding-requests', '--batch', '200', '--rounds', '1', '--model-step'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(':')[0])).toEqual([
      'least-outstanding-requests @ 2',
      'least-outstanding-requests @ 8',
      'least-outstanding-requests @ 32',
      "each tree's core model step + decide + commit + release, each tree in its own process; load average",
    ]);
  });
});

describe('when decision-time-vs reads its command line', () => {
  test('GIVEN only BEFORE_DIST THEN this build is the after-tree; --after names another; paths are resolved', () => {
    const own = bench.parseArgs(['before']);
    expect(own).toEqual({
      beforeDist: join(process.cwd(), 'before'),
      afterDist: compiledDist(),
      policies: ['least-outstanding-requests', 'random', 'round-robin'],
      batch: 200_000,
      rounds: 21,
      withModelStep: false,
    });
    const other = bench.parseArgs(['before', '--after', 'other', '--policies', 'random', '--model-step']);
    expect(other).toMatchObject({ afterDist: join(process.cwd(), 'other'), policies: ['random'], withModelStep: true });
  });
});

describe('when decision-time-vs is given bad input', () => {
  test.each([
    [['--rounds', '3'], 'give the before-tree dist folder first: decision-time-vs.js BEFORE_DIST'],
    [['dist', '--rounds', '0'], '--rounds must be an integer from 1 to 10000000 (got 0)'],
    [['dist', '--batch', '1.5'], '--batch must be an integer from 1 to 10000000 (got 1.5)'],
  ])('GIVEN %j THEN the command refuses it naming the flag', (args, message) => {
    expect(() => bench.parseArgs(args)).toThrow(message);
    const run = spawnSync(process.execPath, [BENCH_JS, ...args], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`${message}\n`);
  });

  test('GIVEN a before-tree folder without a build THEN the comparison fails naming the side', async () => {
    await expect(
      bench.compareTrees({
        beforeDist: join(compiledDist(), 'no-such-tree'),
        afterDist: compiledDist(),
        policies: ['random'],
        batch: 10,
        rounds: 1,
        withModelStep: false,
      }),
    ).rejects.toThrow(/^before side: Cannot find module/);
  });
});
