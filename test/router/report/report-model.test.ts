import {
  buildReport,
  ReportInputError,
  strategyLabel,
  type ReportInput,
  type StrategyRunInput,
} from '../../../router/src/report/report-model';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { longContextWorkload } from '../../../router/src/workload/long-context';

const workload = longContextWorkload({ count: 4 });
const instances = ['a', 'b'];

function record(
  id: string,
  instance: string | null,
  sentAtMs: number,
  ttftMs: number | null,
  e2eMs: number,
  extra: Partial<RequestRecord> = {},
): RequestRecord {
  return {
    id,
    instance,
    sentAtMs,
    ttftMs,
    e2eMs,
    promptTokens: 100,
    cachedPromptTokens: 0,
    outputTokens: 10,
    ...extra,
  };
}

function run(name: string, records: RequestRecord[], extra: Partial<StrategyRunInput> = {}): StrategyRunInput {
  return { strategy: { name }, instances, records, ...extra };
}

function input(runs: StrategyRunInput[], extra: Partial<ReportInput> = {}): ReportInput {
  return { mode: 'simulated', createdAt: '2026-01-01T00:00:00.000Z', workload, runs, ...extra };
}

// random: 4 requests over 0–2,000 ms, all on 'a' except one; 50 % cache hits.
const randomRecords = [
  record('r0', 'a', 0, 100, 1000, { cachedPromptTokens: 50, decisionMicros: 10 }),
  record('r1', 'a', 500, 200, 1000, { cachedPromptTokens: 50, decisionMicros: 20 }),
  record('r2', 'b', 1000, 300, 1000, { cachedPromptTokens: 50, decisionMicros: 30 }),
  record('r3', 'a', 1500, 400, 500, { cachedPromptTokens: 50, decisionMicros: 40 }),
];
// prefix: faster, 80 % hits, one error.
const prefixRecords = [
  record('p0', 'a', 0, 50, 1000, { cachedPromptTokens: 80 }),
  record('p1', 'b', 500, 100, 1000, { cachedPromptTokens: 80 }),
  record('p2', 'b', 1000, 150, 1000, { cachedPromptTokens: 80 }),
  { id: 'p3', instance: 'a', sentAtMs: 1500, ttftMs: null, e2eMs: 500, error: 'upstream_5xx' },
];

describe('when building a report', () => {
  const report = buildReport(
    input([
      run('random', randomRecords),
      run('sagemaker-prefix-aware', prefixRecords, { prometheus: { prefixCacheQueries: 400, prefixCacheHits: 300 } }),
    ]),
  );
  const [random, prefix] = report.strategies;

  test('GIVEN records THEN latency percentiles, hit rate and throughput are computed over the window first send → last completion', () => {
    expect(random.ttftMs).toMatchObject({ count: 4, p50: 250, mean: 250, min: 100, max: 400 });
    expect(random.e2eMs.p50).toBe(1000);
    expect(random.cacheHitRate).toEqual({
      engineReported: 0.5,
      prometheus: null,
      ofFleetCeiling: null,
      fleetCeiling: null,
    });
    expect(random.throughput).toEqual({ windowSeconds: 2, requestsPerSecond: 2, outputTokensPerSecond: 20 });
    expect(random.decisionMicros).toEqual({ count: 4, p50: 25, p99: expect.closeTo(39.7, 9) });
  });

  test('GIVEN records THEN per-instance share, time-weighted mean and max in-flight, and balance ratios come out', () => {
    expect(random.instances).toEqual([
      { id: 'a', requests: 3, share: 0.75, meanInFlight: 1.25, maxInFlight: 2 },
      { id: 'b', requests: 1, share: 0.25, meanInFlight: 0.5, maxInFlight: 1 },
    ]);
    expect(random.balance).toEqual({ requestsMaxOverMean: 1.5, inFlightMaxOverMean: 1.25 / 0.875, peakInFlight: 2 });
  });

  test('GIVEN an errored request THEN it counts in requests, errors and load, not in latency or hit rate', () => {
    expect(prefix).toMatchObject({ requests: 4, succeeded: 3, errors: 1, errorsByCode: { upstream_5xx: 1 } });
    expect(prefix.ttftMs.count).toBe(3);
    expect(prefix.cacheHitRate.engineReported).toBeCloseTo(0.8, 12);
    expect(prefix.cacheHitRate.prometheus).toBe(0.75);
    expect(prefix.instances.map((i) => i.requests)).toEqual([2, 2]);
    expect(prefix.decisionMicros).toEqual({ count: 0, p50: null, p99: null });
  });

  test('GIVEN no baseline named THEN random is the baseline and every other strategy is compared to it', () => {
    expect(report.baseline).toBe('random');
    expect(report.comparisons).toHaveLength(1);
    const c = report.comparisons[0];
    expect(c.label).toBe('sagemaker-prefix-aware');
    expect(c.ttftP50DeltaPct).toBeCloseTo(((100 - 250) / 250) * 100, 9);
    expect(c.hitRateDeltaPoints).toBeCloseTo(30, 9);
    expect(c.requestsPerSecondDeltaPct).toBeCloseTo(((1.5 - 2) / 2) * 100, 9);
  });

  test('GIVEN a named baseline THEN comparisons are against it; an unknown one is refused naming the runs', () => {
    const other = buildReport(
      input([run('random', randomRecords), run('sagemaker-prefix-aware', prefixRecords)], {
        baseline: 'sagemaker-prefix-aware',
      }),
    );
    expect(other.comparisons.map((c) => [c.label, c.baseline])).toEqual([['random', 'sagemaker-prefix-aware']]);
    expect(() => buildReport(input([run('random', randomRecords)], { baseline: 'round-robin' }))).toThrow(
      new ReportInputError("baseline 'round-robin' is not one of the runs (random)"),
    );
  });

  test('GIVEN no random run and no baseline THEN there is no comparison', () => {
    expect(buildReport(input([run('round-robin', randomRecords)])).comparisons).toEqual([]);
  });

  test('GIVEN two runs with the same label THEN the report is refused', () => {
    expect(() => buildReport(input([run('random', randomRecords), run('random', prefixRecords)]))).toThrow(
      /two runs share the label 'random'/,
    );
  });

  test('GIVEN strategy options THEN the label names them; a custom label wins', () => {
    expect(
      strategyLabel({ name: 'sagemaker-prefix-aware', options: { prefixLength: 1024, concurrencyThreshold: 64 } }),
    ).toBe('sagemaker-prefix-aware (prefixLength=1024, concurrencyThreshold=64)');
    expect(buildReport(input([run('random', randomRecords, { label: 'random #2' })])).strategies[0].label).toBe(
      'random #2',
    );
  });

  test('GIVEN a measured window THEN only requests sent in it count for latency, and throughput uses its length', () => {
    const windowed = buildReport(input([run('random', randomRecords, { window: { startMs: 400, endMs: 1400 } })]))
      .strategies[0];
    expect(windowed.requests).toBe(2);
    expect(windowed.ttftMs.p50).toBe(250);
    expect(windowed.throughput).toEqual({ windowSeconds: 1, requestsPerSecond: 1, outputTokensPerSecond: 10 });
    expect(() => buildReport(input([run('random', randomRecords, { window: { startMs: 5, endMs: 5 } })]))).toThrow(
      /window end 5 must be after its start 5/,
    );
  });

  test('GIVEN the workload THEN the report keeps its spec, parameters and load description', () => {
    expect(report.workload).toMatchObject({
      kind: 'long-context',
      spec: workload.spec,
      load: 'open loop, Poisson arrivals at 6 req/s',
    });
    expect(report.workload.parameters.groups).toBe(550);
    expect(report.schemaVersion).toBe(1);
  });

  test('GIVEN a request routed to an instance missing from the list THEN it still shows', () => {
    const s = buildReport(input([run('random', [record('x', 'c', 0, 1, 10)])])).strategies[0];
    expect(s.instances.map((i) => [i.id, i.requests])).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 1],
    ]);
  });
});

describe('when a run brings its own ceilings', () => {
  test('GIVEN per-run ceilings WHEN the report is built THEN each run is scored against its own, not the report-level one', () => {
    const ceilings = (fleetHitRate: number) => ({
      requests: 1,
      promptTokens: 100,
      blockTokens: 16,
      fleetCapacityBlocks: 10,
      idealHitTokens: fleetHitRate * 100,
      idealHitRate: fleetHitRate,
      fleetHitTokens: fleetHitRate * 100,
      fleetHitRate,
      distinctBlocks: 5,
    });
    const records = [
      { id: 'a', instance: 'i0', sentAtMs: 0, ttftMs: 10, e2eMs: 20, promptTokens: 100, cachedPromptTokens: 40 },
    ];
    const report = buildReport({
      mode: 'simulated',
      workload: {
        kind: 'long-context',
        spec: 'long-context',
        description: 'd',
        parameters: {},
        load: { mode: 'closed', concurrency: 1 },
        notes: [],
      },
      ceilings: ceilings(0.5),
      runs: [
        { strategy: { name: 'random' }, instances: ['i0'], records },
        { strategy: { name: 'round-robin' }, instances: ['i0'], records, ceilings: ceilings(0.8) },
      ],
    });
    expect(report.strategies[0].cacheHitRate).toMatchObject({ fleetCeiling: 0.5, ofFleetCeiling: 0.8 });
    expect(report.strategies[1].cacheHitRate).toMatchObject({ fleetCeiling: 0.8, ofFleetCeiling: 0.5 });
  });
});
