import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';
import { withClientLatency } from '../../../router/src/sim/client-latency';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { parseWorkloadSpec } from '../../../router/src/workload';

const small = 'long-context?groups=6&prefixTokens=300&suffixTokens=20..40&outputTokens=4..40&rate=30&count=80';
const tiny = builtinProfile('tiny');

function compare(extra: Partial<Parameters<typeof compareStrategies>[0]> = {}) {
  return compareStrategies({
    workload: parseWorkloadSpec(small),
    policies: [{ name: 'random' }, { name: 'sagemaker-prefix-aware' }],
    instances: 3,
    profile: tiny,
    ...extra,
  });
}

const ttfts = (r: ReturnType<typeof compare>) => r.results.map((x) => x.records.map((rec) => rec.ttftMs));

describe('when variance sources are switched on', () => {
  test('GIVEN no variance option THEN the simulation is the deterministic model (unchanged records)', () => {
    expect(ttfts(compare())).toEqual(ttfts(compare({ stepJitterCv: 0 })));
  });

  test('GIVEN step jitter THEN results move, repeat exactly for a seed, and change with the seed', () => {
    const base = compare();
    const a = compare({ stepJitterCv: 0.2, seed: 3 });
    const b = compare({ stepJitterCv: 0.2, seed: 3 });
    const c = compare({ stepJitterCv: 0.2, seed: 4 });
    expect(ttfts(a)).toEqual(ttfts(b));
    expect(ttfts(a)).not.toEqual(ttfts(base));
    expect(ttfts(a)).not.toEqual(ttfts(c));
    expect(a.report.environment['step-time jitter (CV)']).toBe(0.2);
  });

  test('GIVEN a jitter stream THEN stream 0 is the default draws, and another stream moves results with the seed kept', () => {
    const a = compare({ stepJitterCv: 0.2, seed: 3 });
    expect(ttfts(compare({ stepJitterCv: 0.2, seed: 3, stepJitterStream: 0 }))).toEqual(ttfts(a));
    const other = compare({ stepJitterCv: 0.2, seed: 3, stepJitterStream: 1 });
    expect(ttfts(other)).toEqual(ttfts(compare({ stepJitterCv: 0.2, seed: 3, stepJitterStream: 1 })));
    expect(ttfts(other)).not.toEqual(ttfts(a));
    expect(ttfts(compare({ stepJitterStream: 1 }))).toEqual(ttfts(compare()));
  });

  test.each([[-1], [1.5], [1_000_001]])('GIVEN stepJitterStream %p THEN it is refused naming the range', (stream) => {
    expect(() => compare({ stepJitterCv: 0.2, stepJitterStream: stream })).toThrow(
      `stepJitterStream must be an integer between 0 and 1000000 (got ${stream})`,
    );
  });

  test('GIVEN router overhead and network time THEN every TTFT and E2E grows by an amount within their sum, deterministically', () => {
    const base = compare();
    const latency = { routerOverheadMs: { min: 1.3, max: 1.9 }, networkRttMs: { min: 5, max: 5 } };
    const withIt = compare({ clientLatency: latency });
    const baseRecords = base.report.strategies[0];
    const moved = withIt.report.strategies[0];
    expect(moved.ttftMs.p50! - baseRecords.ttftMs.p50!).toBeGreaterThanOrEqual(6.3 - 1e-9);
    expect(moved.ttftMs.p50! - baseRecords.ttftMs.p50!).toBeLessThanOrEqual(6.9 + 1e-9);
    expect(withIt.report.environment).toMatchObject({
      'router overhead (ms)': '1.3–1.9',
      'network round trip (ms)': '5–5',
    });

    const records: RequestRecord[] = [
      { id: 'a', instance: 'i', sentAtMs: 0, ttftMs: 10, e2eMs: 20 },
      { id: 'b', instance: 'i', sentAtMs: 1, ttftMs: null, e2eMs: 3, error: 'x' },
    ];
    const once = withClientLatency(records, latency, 9);
    expect(withClientLatency(records, latency, 9)).toEqual(once);
    const extra = once[0].e2eMs - 20;
    expect(extra).toBeGreaterThanOrEqual(6.3);
    expect(extra).toBeLessThanOrEqual(6.9);
    expect(once[0].ttftMs).toBeCloseTo(10 + extra, 12);
    expect(once[1].ttftMs).toBeNull();
    expect(withClientLatency(records, undefined, 9)).toBe(records);
    expect(() => withClientLatency(records, { networkRttMs: { min: 3, max: 2 } }, 9)).toThrow(
      'networkRttMs must be a range of milliseconds within 0..60000 with min ≤ max (got 3..2)',
    );
  });

  test.each([
    [{ 'step-jitter': '2' }, /--step-jitter must be a number between 0 and 1 \(got "2"\)/],
    [
      { 'router-overhead': '2..1' },
      /--router-overhead must be a number or a range MIN\.\.MAX, each between 0 and 60000, MIN ≤ MAX \(got "2\.\.1"\)/,
    ],
    [{ 'network-rtt': 'far' }, /--network-rtt must be a number or a range/],
  ])('GIVEN the flags %p THEN they are refused naming the flag and the range', (flags, message) => {
    expect(() => parseSimulateFlags({ workload: small, ...flags })).toThrow(message);
  });

  test('GIVEN valid flags THEN they reach the simulation', () => {
    const flags = parseSimulateFlags({
      workload: small,
      stepJitter: '0.002',
      routerOverhead: '1.3..1.9',
      networkRtt: '2',
    });
    expect(flags.stepJitterCv).toBe(0.002);
    expect(flags.clientLatency).toEqual({ routerOverheadMs: { min: 1.3, max: 1.9 }, networkRttMs: { min: 2, max: 2 } });
  });
});
