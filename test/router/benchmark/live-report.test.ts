import {
  appendToReport,
  buildLiveReport,
  fileSlug,
  recordsJsonl,
  ReportAppendError,
  toStrategyRun,
  type LiveBenchmarkResult,
  type LiveRequestRecord,
} from '../../../router/src/benchmark';
import { parseReportJson, renderJson } from '../../../router/src/report';
import { parseWorkloadSpec } from '../../../router/src/workload';

const workload = parseWorkloadSpec('shared-system?groups=2&promptsPerGroup=2&concurrency=2');

function record(id: string, sentAtMs: number, ttftMs: number, cached: number, instance = 'a'): LiveRequestRecord {
  return {
    id,
    instance,
    sentAtMs,
    ttftMs,
    e2eMs: ttftMs + 100,
    promptTokens: 1000,
    cachedPromptTokens: cached,
    outputTokens: 10,
    arrivalMs: 0,
    httpStatus: 200,
    cachedTokensReported: true,
  };
}

function result(ttftMs: number, cached: number, overrides: Partial<LiveBenchmarkResult> = {}): LiveBenchmarkResult {
  const records = [record('r0', 0, ttftMs, cached), record('r1', 10, ttftMs, cached, 'b')];
  return {
    records,
    window: { startMs: 0, endMs: 10 + ttftMs + 100 },
    backendMetrics: [],
    instancesSeen: ['a', 'b'],
    wallMs: 1,
    sent: 2,
    failed: 0,
    stopReason: 'completed',
    model: 'm',
    url: 'http://h',
    timeScale: 1,
    load: workload.load,
    peakInFlight: 2,
    maxSendLagMs: 0,
    notes: ['a note'],
    ...overrides,
  };
}

/** Appending works from the JSON file, as the CLI does it. */
function roundTrip(report: ReturnType<typeof buildLiveReport>): ReturnType<typeof buildLiveReport> {
  return parseReportJson(renderJson(report));
}

describe('when live runs are reported and appended', () => {
  const random = buildLiveReport({
    result: result(400, 0),
    workload,
    strategy: 'random',
    createdAt: '2026-01-01T00:00:00.000Z',
  });

  it('GIVEN one run THEN it is a one-strategy live report with labelled notes and the shared environment', () => {
    expect(random.mode).toBe('live');
    expect(random.strategies.map((s) => s.label)).toEqual(['random']);
    expect(random.environment).toMatchObject({ model: 'm', 'time scale': 1 });
    expect(random.notes).toEqual(['random: run at 2026-01-01T00:00:00.000Z.', 'random: a note']);
  });

  it('GIVEN a second strategy appended to the JSON of the first THEN both are side by side, compared against random', () => {
    const affine = buildLiveReport({
      result: result(100, 800),
      workload,
      strategy: { name: 'sagemaker-prefix-aware', options: { prefixLength: 2048 } },
    });
    const merged = appendToReport(roundTrip(random), affine);
    expect(merged.strategies.map((s) => s.label)).toEqual(['random', 'sagemaker-prefix-aware (prefixLength=2048)']);
    expect(merged.baseline).toBe('random');
    expect(merged.comparisons).toHaveLength(1);
    expect(merged.comparisons[0].ttftP50DeltaPct).toBeCloseTo(-75, 9);
    expect(merged.comparisons[0].hitRateDeltaPoints).toBeCloseTo(80, 9);
    expect(merged.notes).toContain('sagemaker-prefix-aware (prefixLength=2048): a note');
  });

  it('GIVEN a baseline named on append THEN comparisons are recomputed against it', () => {
    const b = buildLiveReport({ result: result(100, 800), workload, strategy: 'b' });
    const merged = appendToReport(roundTrip(random), b, 'b');
    expect(merged.baseline).toBe('b');
    expect(merged.comparisons.map((c) => c.label)).toEqual(['random']);
  });

  it.each([
    [
      'a label already present',
      () => buildLiveReport({ result: result(1, 0), workload, strategy: 'random' }),
      "already has a run labelled 'random'",
    ],
    [
      'another workload',
      () => buildLiveReport({ result: result(1, 0), workload: parseWorkloadSpec('short-chat?count=2'), strategy: 'x' }),
      'strategies compare only on the same workload',
    ],
    [
      'another time scale',
      () => buildLiveReport({ result: result(1, 0, { timeScale: 10 }), workload, strategy: 'x' }),
      "time scale is '1' but this run's is '10'",
    ],
    [
      'another model',
      () => buildLiveReport({ result: result(1, 0, { model: 'other' }), workload, strategy: 'x' }),
      "model is 'm' but this run's is 'other'",
    ],
  ])('GIVEN %s THEN appending is refused, saying what differs', (_name, make, message) => {
    expect(() => appendToReport(random, make())).toThrow(ReportAppendError);
    expect(() => appendToReport(random, make())).toThrow(message);
  });

  it('GIVEN a server that never reported cached tokens THEN the hit rate is unknown rather than 0', () => {
    const r = result(100, 0);
    const silent = {
      ...r,
      records: r.records.map((x) => ({ ...x, cachedPromptTokens: undefined, cachedTokensReported: false })),
    };
    const report = buildLiveReport({ result: silent, workload, strategy: 'x' });
    expect(report.strategies[0].cacheHitRate.engineReported).toBeNull();
  });

  it('GIVEN a warm-up that outlasted the run THEN the run cannot be reported, with a message saying so', () => {
    expect(() => toStrategyRun(result(100, 0, { window: { startMs: 500, endMs: 500 } }), 'x')).toThrow(
      'nothing was measured',
    );
  });

  it('GIVEN records THEN the sidecar has one JSON line each, and labels become safe file names', () => {
    expect(
      recordsJsonl(result(1, 0))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['r0', 'r1']);
    expect(fileSlug('sagemaker-prefix-aware (prefixLength=2048)')).toBe('sagemaker-prefix-aware-prefixLength-2048');
    expect(fileSlug('///')).toBe('run');
  });
});
