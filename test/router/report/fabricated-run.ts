import { SeededRng } from '../../../router/src/common/seeded-rng';
import type { Ceilings } from '../../../router/src/report/ceilings';
import type { ReportInput, StrategyRunInput } from '../../../router/src/report/report-model';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { longContextWorkload } from '../../../router/src/workload/long-context';

/**
 * A realistic but fabricated comparison (no simulator involved): 7 instances, long-context traffic at 6 req/s
 * for 5 minutes, with latency and hit-rate shapes like AWS's published RANDOM vs PREFIX_AWARE experiment.
 * Used to exercise the report end to end and to look at the HTML page.
 */
export const INSTANCES = Array.from({ length: 7 }, (_, i) => `http://127.0.0.1:${9001 + i}`);

function logNormal(rng: SeededRng, median: number, sigma: number): number {
  const u = Math.max(rng.next(), 1e-12);
  const v = rng.next();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return median * Math.exp(sigma * z);
}

interface Shape {
  readonly name: string;
  readonly hitProbability: number;
  /** Instance for request i of group g. */
  readonly place: (rng: SeededRng, group: number) => number;
  readonly queueFactor: number;
  readonly decisionMicros: number;
  readonly errors: number;
}

function fabricateRecords(shape: Shape, seed: number): RequestRecord[] {
  const rng = new SeededRng(seed);
  const records: RequestRecord[] = [];
  let t = 0;
  for (let i = 0; i < 1800; i++) {
    t += rng.nextExponential(1000 / 6);
    const group = rng.nextInt(550);
    const hit = rng.next() < shape.hitProbability;
    const prompt = 7900 + rng.nextInt(200);
    const cached = hit ? 7008 : 0;
    const ttft =
      (hit ? logNormal(rng, 80, 0.35) : logNormal(rng, 430, 0.3)) *
      (1 + shape.queueFactor * rng.next() * rng.next() * 4);
    const output = 256;
    const e2e = ttft + output * logNormal(rng, 22, 0.1);
    const failed = i % Math.floor(1800 / Math.max(shape.errors, 1)) === 7 && shape.errors > 0;
    records.push({
      id: `lc-${String(i).padStart(6, '0')}`,
      instance: INSTANCES[shape.place(rng, group)],
      sentAtMs: t,
      ttftMs: failed ? null : ttft,
      e2eMs: failed ? 30_000 : e2e,
      ...(failed
        ? { error: 'upstream_timeout' }
        : { promptTokens: prompt, cachedPromptTokens: cached, outputTokens: output }),
      decisionMicros: logNormal(rng, shape.decisionMicros, 0.25),
    });
  }
  return records;
}

export const FABRICATED_CEILINGS: Ceilings = {
  requests: 1800,
  promptTokens: 1800 * 8000,
  blockTokens: 16,
  fleetCapacityBlocks: 7 * 84000,
  idealHitTokens: 12_300_000,
  idealHitRate: 12_300_000 / (1800 * 8000),
  fleetHitTokens: 12_200_000,
  fleetHitRate: 12_200_000 / (1800 * 8000),
  distinctBlocks: 420_000,
};

export function fabricatedRuns(): StrategyRunInput[] {
  const shapes: Shape[] = [
    {
      name: 'random',
      hitProbability: 0.29,
      place: (rng) => rng.nextInt(7),
      queueFactor: 0.6,
      decisionMicros: 40,
      errors: 0,
    },
    {
      name: 'least-outstanding-requests',
      hitProbability: 0.3,
      place: (rng) => rng.nextInt(7),
      queueFactor: 0.35,
      decisionMicros: 55,
      errors: 3,
    },
    {
      name: 'sagemaker-prefix-aware',
      hitProbability: 0.95,
      place: (_rng, group) => (group * 2654435761) % 7,
      queueFactor: 0.5,
      decisionMicros: 1500,
      errors: 0,
    },
  ];
  return shapes.map((shape, i) => ({
    strategy:
      shape.name === 'sagemaker-prefix-aware'
        ? { name: shape.name, options: { prefixLength: 1024, concurrencyThreshold: 64 } }
        : { name: shape.name },
    instances: INSTANCES,
    records: fabricateRecords(shape, 100 + i),
    prometheus: {
      prefixCacheQueries: 1800 * 8000,
      prefixCacheHits: Math.round(1800 * 8000 * shape.hitProbability * 0.876),
    },
  }));
}

export function fabricatedReportInput(): ReportInput {
  const workload = longContextWorkload({ duration: 300 });
  return {
    title: 'Routing strategies on long-context (fabricated example)',
    mode: 'simulated',
    createdAt: '2026-01-01T00:00:00.000Z',
    workload,
    environment: { instances: 7, profile: 'p5-llama-3.1-70b', kvBlocksPerInstance: 84000 },
    ceilings: FABRICATED_CEILINGS,
    runs: fabricatedRuns(),
    notes: ['Fabricated data for tests: no simulator or engine produced these numbers.'],
  };
}
