import type { LiveProgress } from '../../../router/src/benchmark/live-benchmark-options';
import { SimulationProgressBoard } from '../../../router/src/sim/simulation-progress';

function board(options: { sendUntilMs?: number; quietMs?: number } = {}) {
  let clock = 0;
  const reports: LiveProgress[] = [];
  const b = new SimulationProgressBoard({
    strategies: 2,
    expectedPerStrategy: 100,
    expectedExact: false,
    report: (p) => reports.push(p),
    now: () => clock,
    ...options,
  });
  return { b, reports, tick: (ms: number) => (clock += ms) };
}

describe('when strategies report simulation progress', () => {
  test('GIVEN a run shorter than the quiet time THEN nothing is reported, not even its end', () => {
    const { b, reports, tick } = board();
    b.progress(0, { simulatedMs: 1000, sent: 10, finished: 5, failed: 0, expected: 100 });
    tick(2999);
    b.strategyDone(0, 100, 0);
    b.strategyDone(1, 100, 0);
    expect(reports).toEqual([]);
  });

  test('GIVEN a long run THEN counts add up over strategies and the part done is their mean', () => {
    const { b, reports, tick } = board();
    tick(3000);
    b.progress(0, { simulatedMs: 1000, sent: 60, finished: 50, failed: 2, expected: 100 });
    b.progress(1, { simulatedMs: 500, sent: 30, finished: 20, failed: 1, expected: 100 });
    expect(reports.at(-1)).toMatchObject({
      phase: 'measuring',
      sent: 90,
      finished: 70,
      failed: 3,
      inFlight: 20,
      expected: 200,
      fraction: (0.5 + 0.2) / 2,
      modelMs: 1000,
    });
    b.strategyDone(0, 101, 10);
    b.strategyDone(1, 99, 0);
    // The errors each strategy's report counts, not the last progress tick's.
    expect(reports.at(-1)).toMatchObject({ phase: 'done', sent: 200, finished: 200, failed: 10, fraction: 1 });
  });

  test('GIVEN a send window THEN the part done is virtual time over the window', () => {
    const { b, reports } = board({ sendUntilMs: 10_000, quietMs: 0 });
    b.progress(0, { simulatedMs: 2500, sent: 1, finished: 0, failed: 0, expected: 100 });
    expect(reports.at(-1)!.fraction).toBeCloseTo(0.125, 12);
  });
});
