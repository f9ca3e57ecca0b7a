/**
 * `npm run bench:sim`: reproduces AWS's published PREFIX_AWARE experiment in simulation and writes
 * docs/benchmarks.md (plus full reports under reports/bench-sim/).
 *
 * Scenarios, each on 7 × p5-llama-3.1-70b engine models with cold caches per strategy:
 *   1. long-context — AWS's shape: ~8,000-token prompts in groups sharing 7,000-token prefixes; closed loop of
 *      64 clients, one simulated hour of sending; then the same replica with ConcurrencyThreshold swept (and the
 *      sample notebook's threshold at other client counts), charted in docs/aws-threshold-sweep.svg.
 *   2. short-chat — AWS's short-context experiment: multi-turn conversations whose history grows, 30 simulated
 *      minutes, open loop and closed loop; shows how prefixLength decides whether a conversation keeps its instance.
 *   3. sensitivity — long-context at other loads and output lengths (random vs sagemaker-prefix-aware only).
 *   4. variance sources — the replica with each source of real-fleet variance switched on alone, to show how
 *      each moves the deltas against RANDOM (random vs sagemaker-prefix-aware only).
 *
 *   npm run bench:sim [-- --quick] [--jobs N]  (--quick: 10 simulated minutes instead of an hour, for a smoke run;
 *                                              --jobs: strategies simulated at once, default min(2, cores))
 *   npm run bench:sim -- --from-reports  (rewrite docs/benchmarks.md and the chart from the last run's reports/bench-sim/, no simulation)
 *
 * It writes only the part of docs/benchmarks.md between its markers; other commands' sections stay.
 */
import { integerFlag } from '../src/cli/flag-values';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { builtinProfile } from '../src/emulator/engine-profile';
import type { PolicyConfig } from '../src/policy';
import { MEASURED_STEP_JITTER_CV } from '../src/emulator/step-jitter';
import { AWS_ROUTER_OVERHEAD_MS, type ClientLatency } from '../src/sim/client-latency';
import type { StrategyComparison } from '../src/sim/compare-strategies';
import { compareStrategiesInParallel, JOBS_RANGE } from '../src/sim/parallel-runs';
import { bandChart, seriesColor } from '../src/report/svg-charts';
import { withMarkedSection } from './marked-section';
import {
  AWS_LONG_CONTEXT,
  AWS_SHORT_CONTEXT,
  reproducedBand,
  thresholdPerInstanceLoad,
  TOLERANCE_POINTS,
  verdictOf,
  withinPublished,
  type PublishedFigures,
  type ReplicaFigures,
} from './aws-experiments';
import { parseReportJson, writeReport, type BenchmarkReport, type StrategySummary } from '../src/report';
import { parseWorkloadSpec } from '../src/workload';

const INSTANCES = 7;
const PROFILE = builtinProfile('p5-llama-3.1-70b');
const SPA: PolicyConfig = { name: 'sagemaker-prefix-aware' };

/** AWS's published figures (DESIGN.md §5): PREFIX_AWARE vs RANDOM on 7 × ml.p5.48xlarge, Llama 3.1 70B. */
const AWS = {
  longContext: {
    ttftP50: '−71…77 %',
    ttftP90: '−33…37 %',
    hit: '≈25 % → ≈82 %',
    throughput: '+15…16 %',
    share: '13.3–15.4 %',
  },
  shortChat: { ttftP50: '−13…16 %', ttftP90: '−24…37 %', hit: '≈30 % → ≈80 %', throughput: '+1.7…2.0 %' },
};

const verdict = (ok: boolean) => (ok ? '**reproduced**' : '**not reproduced**');

interface Variance {
  readonly stepJitterCv?: number;
  readonly clientLatency?: ClientLatency;
}

/**
 * The replica's default variance: only sources whose size is published. Step-time jitter as measured on vLLM
 * (step-jitter.ts) and SageMaker's managed-router overhead as AWS reports it (1.3–1.9 ms; RANDOM goes through the
 * same router). Left out, because AWS did not publish them: client network time, output-length spread and
 * group popularity skew; section 4 shows what each would do.
 */
const DEFAULT_VARIANCE: Variance = {
  stepJitterCv: MEASURED_STEP_JITTER_CV,
  clientLatency: { routerOverheadMs: AWS_ROUTER_OVERHEAD_MS },
};

interface Scenario {
  readonly key: string;
  readonly title: string;
  readonly workload: string;
  readonly policies: readonly PolicyConfig[];
  readonly sendSeconds: number;
  readonly variance?: Variance;
}

/** AWS ran the short-context experiment for 30 minutes (shorter with --quick). */
const shortSeconds = (seconds: number) => Math.min(seconds, 1800);
/** The long replica's client count, reused for the closed-loop short replica: AWS published neither. */
const LONG_CLIENTS = 64;
const SHORT_CLOSED_CLIENTS = LONG_CLIENTS;

function scenarios(seconds: number): Scenario[] {
  // Closed-loop workloads are sized generously (rate × duration); the send window ends the run.
  const lc = (extra: string) => `long-context?outputTokens=1024&duration=${seconds * 3}&${extra}`;
  return [
    {
      key: 'long-context',
      title: 'long-context (AWS replica): 7 × p5, closed loop of 64, 1,024 output tokens',
      workload: lc(`concurrency=${LONG_CLIENTS}`),
      policies: [{ name: 'random' }, { name: 'least-outstanding-requests' }, SPA],
      sendSeconds: seconds,
      variance: DEFAULT_VARIANCE,
    },
    {
      key: 'short-chat',
      title: `short-context (AWS replica): multi-turn chat, open loop at 4 req/s, ${shortSeconds(seconds) / 60} simulated minutes`,
      workload: `short-chat?duration=${shortSeconds(seconds)}`,
      policies: [
        { name: 'random' },
        { name: 'least-outstanding-requests' },
        SPA,
        { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
      ],
      sendSeconds: shortSeconds(seconds),
      variance: DEFAULT_VARIANCE,
    },
    {
      key: 'short-chat-closed',
      title: `short-context (AWS replica): multi-turn chat, closed loop of ${SHORT_CLOSED_CLIENTS} clients, ${shortSeconds(seconds) / 60} simulated minutes`,
      workload: `short-chat?duration=${shortSeconds(seconds) * 3}&concurrency=${SHORT_CLOSED_CLIENTS}`,
      policies: [{ name: 'random' }, { name: 'sagemaker-prefix-aware', prefixLength: 1024 }],
      sendSeconds: shortSeconds(seconds),
      variance: DEFAULT_VARIANCE,
    },
  ];
}

/** ConcurrencyThreshold values of the sweep at the replica's 64 clients (9.1 in flight per instance on average). */
const SWEEP_THRESHOLDS = [6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 32] as const;
/** The sample notebook's ConcurrencyThreshold (DESIGN.md §5), at other client counts. */
const NOTEBOOK_THRESHOLD = 10;
const NOTEBOOK_CLIENTS = [32, 48, 80, 96, 128] as const;

/** One point of the sweep: a PREFIX_AWARE setting at a client count, against RANDOM at the same client count. */
interface SweepPoint {
  readonly clients: number;
  readonly threshold: number;
  /** threshold ÷ (clients ÷ instances). */
  readonly x: number;
  readonly figures: ReplicaFigures;
  /** Share of requests sent off their prefix's instance (0–1): spilled past the threshold, or every instance at it. */
  readonly offAffinityShare: number;
  /** Smallest and largest instance's share of the requests (percent). */
  readonly share: { readonly min: number; readonly max: number };
}

/** AWS's published per-instance request shares under PREFIX_AWARE (long context), percent. */
const AWS_LONG_CONTEXT_SHARE = { min: 13.3, max: 15.4 } as const;

/**
 * Spills at the concurrency threshold: the long replica (same workload and variance) with ConcurrencyThreshold
 * swept at 64 clients, and the notebook's threshold at other client counts; as long as section 1 (AWS's hour).
 */
function thresholdScenarios(seconds: number): Scenario[] {
  const sweepSeconds = seconds;
  const workload = (clients: number) =>
    `long-context?outputTokens=1024&duration=${sweepSeconds * 3}&concurrency=${clients}`;
  return [
    {
      key: 'threshold-c64',
      title: `long-context replica, ${LONG_CLIENTS} clients, ConcurrencyThreshold swept`,
      workload: workload(LONG_CLIENTS),
      policies: [
        { name: 'random' },
        ...SWEEP_THRESHOLDS.map((t): PolicyConfig => ({ name: 'sagemaker-prefix-aware', concurrencyThreshold: t })),
      ],
      sendSeconds: sweepSeconds,
      variance: DEFAULT_VARIANCE,
    },
    ...NOTEBOOK_CLIENTS.map((clients): Scenario => ({
      key: `threshold-notebook-c${clients}`,
      title: `long-context replica, ${clients} clients, ConcurrencyThreshold ${NOTEBOOK_THRESHOLD}`,
      workload: workload(clients),
      policies: [{ name: 'random' }, { name: 'sagemaker-prefix-aware', concurrencyThreshold: NOTEBOOK_THRESHOLD }],
      sendSeconds: sweepSeconds,
      variance: DEFAULT_VARIANCE,
    })),
  ];
}

/** A PREFIX_AWARE row of a report as the four published figures, against the report's RANDOM row. */
function replicaFigures(report: BenchmarkReport, label: string): ReplicaFigures {
  const c = comparison(report, label);
  const random = strategy(report, 'random');
  const s = strategy(report, label);
  const pctOf = (x: number | null) => (x === null ? null : x * 100);
  return {
    ttftP50DeltaPct: c.ttftP50DeltaPct,
    ttftP90DeltaPct: c.ttftP90DeltaPct,
    hitRandomPct: pctOf(hit(random)),
    hitPrefixAwarePct: pctOf(hit(s)),
    throughputDeltaPct: c.outputTokensPerSecondDeltaPct,
  };
}

function sweepPoints(runs: readonly { scenario: Scenario; result: StrategyComparison }[]): SweepPoint[] {
  const points: SweepPoint[] = [];
  for (const { scenario, result } of runs) {
    const clients = Number(/concurrency=(\d+)/.exec(scenario.workload)![1]);
    for (const s of result.report.strategies) {
      if (s.label === 'random') continue;
      const threshold = Number(/concurrencyThreshold=(\d+)/.exec(s.label)?.[1] ?? NOTEBOOK_THRESHOLD);
      points.push({
        clients,
        threshold,
        x: thresholdPerInstanceLoad(threshold, clients, INSTANCES),
        figures: replicaFigures(result.report, s.label),
        offAffinityShare: (s.decisionReasons['threshold-spill'] ?? 0) + (s.decisionReasons['all-saturated'] ?? 0),
        share: {
          min: Math.min(...s.instances.map((i) => i.share * 100)),
          max: Math.max(...s.instances.map((i) => i.share * 100)),
        },
      });
    }
  }
  return points.sort((a, b) => a.x - b.x || a.clients - b.clients);
}

/** P50, P90 and hit rate against threshold ÷ per-instance load, each with AWS's range as a band. */
function thresholdChart(points: readonly SweepPoint[], published: PublishedFigures): string {
  const sweep = points.filter((p) => p.clients === LONG_CLIENTS);
  const notebook = points.filter((p) => p.threshold === NOTEBOOK_THRESHOLD);
  const neg = (v: number | null) => (v === null ? null : -v);
  const series = [
    {
      label: `TTFT P50 reduction, ${LONG_CLIENTS} clients, threshold swept (band: AWS's 71–77 %)`,
      color: seriesColor(0),
      points: sweep.map((p) => ({ x: p.x, value: neg(p.figures.ttftP50DeltaPct) })),
      band: { min: -published.ttftP50.max, max: -published.ttftP50.min },
    },
    {
      label: `TTFT P90 reduction, ${LONG_CLIENTS} clients, threshold swept (band: AWS's 33–37 %)`,
      color: seriesColor(1),
      points: sweep.map((p) => ({ x: p.x, value: neg(p.figures.ttftP90DeltaPct) })),
      band: { min: -published.ttftP90.max, max: -published.ttftP90.min },
    },
    {
      label: `PREFIX_AWARE hit rate, ${LONG_CLIENTS} clients, threshold swept (band: AWS's ≈82 %)`,
      color: seriesColor(2),
      points: sweep.map((p) => ({ x: p.x, value: p.figures.hitPrefixAwarePct })),
      band: published.hitPrefixAware,
    },
    {
      label: `TTFT P90 reduction, threshold ${NOTEBOOK_THRESHOLD} (the notebook's), clients ${NOTEBOOK_CLIENTS.join(', ')} and ${LONG_CLIENTS}`,
      color: seriesColor(3),
      points: notebook.map((p) => ({ x: p.x, value: neg(p.figures.ttftP90DeltaPct) })),
    },
    {
      label: `PREFIX_AWARE hit rate, threshold ${NOTEBOOK_THRESHOLD}, same client counts`,
      color: seriesColor(4),
      points: notebook.map((p) => ({ x: p.x, value: p.figures.hitPrefixAwarePct })),
    },
  ];
  return `${bandChart(series, {
    title: `Long-context replica (7 × p5, Llama 3.1 70B): PREFIX_AWARE against RANDOM by ConcurrencyThreshold ÷ mean in-flight requests per instance (npm run bench:sim)`,
    xLabel: 'ConcurrencyThreshold ÷ (clients ÷ instances)',
    yLabel: 'percent: TTFT reduction against RANDOM, hit rate',
    formatX: (x) => `${Number(x.toPrecision(3))}×`,
    formatValue: (v) => `${Number(v.toPrecision(3))} %`,
    guide: { x: 1, label: 'threshold = mean load' },
    yMax: 100,
    standalone: true,
  })}\n`;
}

function sensitivity(seconds: number): Scenario[] {
  const out: Scenario[] = [];
  for (const outputTokens of [256, 1024]) {
    for (const concurrency of [16, 64, 128]) {
      out.push({
        key: `sensitivity-o${outputTokens}-c${concurrency}`,
        title: `long-context, ${outputTokens} output tokens, closed loop of ${concurrency}`,
        workload: `long-context?outputTokens=${outputTokens}&duration=${seconds * 8}&concurrency=${concurrency}`,
        policies: [{ name: 'random' }, SPA],
        sendSeconds: seconds,
      });
    }
  }
  out.push({
    key: 'sensitivity-open-6',
    title: 'long-context, 256 output tokens, open loop at 6 req/s',
    workload: `long-context?outputTokens=256&duration=${seconds}&rate=6`,
    policies: [{ name: 'random' }, SPA],
    sendSeconds: seconds,
  });
  return out;
}

/** One row per source of variance, alone, on the replica's workload; then all the defaults together. */
function varianceScenarios(seconds: number): { scenario: Scenario; source: string; why: string }[] {
  const workload = (outputTokens = '1024', extra = '') =>
    `long-context?outputTokens=${outputTokens}&duration=${seconds * 3}&concurrency=64${extra}`;
  const rows: { source: string; why: string; workload?: string; variance?: Variance }[] = [
    { source: 'none (the deterministic model)', why: 'reference' },
    {
      source: `step-time jitter, CV ${MEASURED_STEP_JITTER_CV * 100} %`,
      why: 'measured: vLLM nightly latency benchmark (P99 − P50 over repeated fixed batches)',
      variance: { stepJitterCv: MEASURED_STEP_JITTER_CV },
    },
    { source: 'step-time jitter, CV 5 %', why: 'stress: 25× the measured spread', variance: { stepJitterCv: 0.05 } },
    {
      source: `router overhead ${AWS_ROUTER_OVERHEAD_MS.min}–${AWS_ROUTER_OVERHEAD_MS.max} ms`,
      why: 'published by AWS for its managed routing',
      variance: { clientLatency: { routerOverheadMs: AWS_ROUTER_OVERHEAD_MS } },
    },
    {
      source: 'network round trip 0.5–2 ms',
      why: 'client in the same region (not published by AWS)',
      variance: { clientLatency: { networkRttMs: { min: 0.5, max: 2 } } },
    },
    {
      source: 'network round trip 60–90 ms',
      why: 'client in another region (not published by AWS)',
      variance: { clientLatency: { networkRttMs: { min: 60, max: 90 } } },
    },
    {
      source: 'output length 512–1,536 tokens',
      why: 'same mean as the replica\u2019s 1,024, ±50 % (not published by AWS)',
      workload: workload('512..1536'),
    },
    {
      source: 'output length 64–1,984 tokens',
      why: 'same mean, widest uniform spread',
      workload: workload('64..1984'),
    },
    {
      source: 'Zipf group popularity, s = 1',
      why: 'skewed reuse, as in chat and RAG traffic (not published by AWS)',
      workload: workload('1024', '&popularity=zipf&zipfExponent=1'),
    },
    {
      source: 'defaults of the replica (jitter 0.2 % + router overhead)',
      why: 'section 1',
      variance: DEFAULT_VARIANCE,
    },
  ];
  return rows.map((row, i) => ({
    source: row.source,
    why: row.why,
    scenario: {
      key: `variance-${i}`,
      title: `long-context replica, variance: ${row.source}`,
      workload: row.workload ?? workload(),
      policies: [{ name: 'random' }, SPA],
      sendSeconds: seconds,
      variance: row.variance,
    },
  }));
}

async function run(scenario: Scenario, jobs: number): Promise<StrategyComparison> {
  const started = Date.now();
  process.stderr.write(`${scenario.key}: ${scenario.workload}\n`);
  const comparison = await compareStrategiesInParallel(
    {
      workload: parseWorkloadSpec(scenario.workload),
      policies: scenario.policies,
      instances: INSTANCES,
      profile: PROFILE,
      sendUntilMs: scenario.sendSeconds * 1000,
      stepJitterCv: scenario.variance?.stepJitterCv,
      clientLatency: scenario.variance?.clientLatency,
      title: scenario.title,
      baseline: 'random',
      onStrategyDone: (p, r) =>
        process.stderr.write(
          `  ${p.name}: ${r.records.length} requests, ${(r.simulatedMs / 1000).toFixed(0)} s simulated in ${(r.wallMs / 1000).toFixed(1)} s\n`,
        ),
    },
    { jobs },
  );
  process.stderr.write(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return comparison;
}

const pct = (x: number | null, digits = 1) =>
  x === null ? '—' : `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(x).toFixed(digits)} %`;
const rate = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
const ms = (x: number | null) => (x === null ? '—' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);

function strategy(report: BenchmarkReport, label: string): StrategySummary {
  const s = report.strategies.find((x) => x.label === label);
  if (!s) throw new Error(`no strategy ${label} in report`);
  return s;
}

function comparison(report: BenchmarkReport, label: string) {
  const c = report.comparisons.find((x) => x.label === label);
  if (!c) throw new Error(`no comparison for ${label}`);
  return c;
}

function hit(s: StrategySummary): number | null {
  return s.cacheHitRate.engineReported;
}

function shareRange(s: StrategySummary): string {
  const shares = s.instances.map((i) => i.share * 100);
  return `${Math.min(...shares).toFixed(1)}–${Math.max(...shares).toFixed(1)} %`;
}

function resultsTable(report: BenchmarkReport): string {
  const rows = report.strategies.map((s) => {
    const c = report.comparisons.find((x) => x.label === s.label);
    return `| ${s.label} | ${s.requests.toLocaleString('en-US')} | ${ms(s.ttftMs.p50)} | ${ms(s.ttftMs.p90)} | ${ms(s.ttftMs.p99)} | ${rate(hit(s))} | ${rate(s.cacheHitRate.ofFleetCeiling)} | ${s.throughput.requestsPerSecond?.toFixed(2) ?? '—'} | ${s.throughput.outputTokensPerSecond?.toFixed(0) ?? '—'} | ${shareRange(s)} | ${c ? pct(c.ttftP50DeltaPct) : 'baseline'} | ${c ? pct(c.ttftP90DeltaPct) : ''} | ${c ? pct(c.outputTokensPerSecondDeltaPct) : ''} |`;
  });
  return [
    '| strategy | requests | TTFT P50 | TTFT P90 | TTFT P99 | hit rate | of fleet ceiling | req/s | output tok/s | per-instance share | Δ TTFT P50 | Δ TTFT P90 | Δ throughput |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** What the doc says about the run itself; written beside the reports so --from-reports can re-render the doc. */
interface RunMeta {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
  readonly quick: boolean;
  readonly totalSeconds: number;
  /** Wall seconds per strategy of the long-context replica. */
  readonly longContextWallSeconds: readonly number[];
}

/** The part of docs/benchmarks.md this command writes. */
const BENCH_SIM_MARKERS = { begin: '<!-- bench:sim -->', end: '<!-- /bench:sim -->' } as const;

// eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
async function main(): Promise<void> {
  const fromReports = process.argv.includes('--from-reports');
  const outDir = join('reports', 'bench-sim');
  const metaFile = join(outDir, 'run.json');
  const savedMeta: RunMeta | undefined = fromReports
    ? (JSON.parse(await readFile(metaFile, 'utf8')) as RunMeta)
    : undefined;
  const quick = savedMeta?.quick ?? process.argv.includes('--quick');
  const seconds = quick ? 600 : 3600;
  const jobsFlag = process.argv.indexOf('--jobs');
  const jobs =
    jobsFlag >= 0
      ? integerFlag('jobs', process.argv[jobsFlag + 1], JOBS_RANGE.min, JOBS_RANGE.max)
      : Math.min(2, availableParallelism());
  await mkdir(outDir, { recursive: true });

  const started = Date.now();
  const get = async (s: Scenario): Promise<StrategyComparison> =>
    fromReports
      ? { report: parseReportJson(await readFile(join(outDir, `${s.key}.json`), 'utf8')), results: [] }
      : run(s, jobs);
  const main: { scenario: Scenario; result: StrategyComparison }[] = [];
  for (const s of scenarios(seconds)) main.push({ scenario: s, result: await get(s) });
  const sens: { scenario: Scenario; result: StrategyComparison }[] = [];
  for (const s of sensitivity(seconds)) sens.push({ scenario: s, result: await get(s) });
  const variance: (ReturnType<typeof varianceScenarios>[number] & { result: StrategyComparison })[] = [];
  for (const v of varianceScenarios(seconds)) variance.push({ ...v, result: await get(v.scenario) });
  const thresholdRuns: { scenario: Scenario; result: StrategyComparison }[] = [];
  for (const s of thresholdScenarios(seconds)) thresholdRuns.push({ scenario: s, result: await get(s) });
  const meta: RunMeta = savedMeta ?? {
    date: new Date().toISOString().slice(0, 10),
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    cores: cpus().length,
    node: process.version,
    quick,
    totalSeconds: (Date.now() - started) / 1000,
    longContextWallSeconds: main[0].result.results.map((r) => r.wallMs / 1000),
  };
  const totalSeconds = meta.totalSeconds;
  if (!fromReports) {
    for (const { scenario, result } of [...main, ...sens, ...variance, ...thresholdRuns])
      await writeReport(result.report, outDir, { baseName: scenario.key });
    await writeFile(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
  }

  const lc = main[0].result.report;
  const sc = main[1].result.report;
  const lcSpa = comparison(lc, 'sagemaker-prefix-aware');
  const lcRandom = strategy(lc, 'random');
  const lcSpaSummary = strategy(lc, 'sagemaker-prefix-aware');
  const scDefault = comparison(sc, 'sagemaker-prefix-aware');
  const scShortKey = sc.comparisons.find((c) => c.label.includes('1024'))!;
  const lcWall = meta.longContextWallSeconds;
  const cpu = meta.cpu;
  const command = quick ? 'npm run bench:sim -- --quick' : 'npm run bench:sim';
  const sweep = sweepPoints(thresholdRuns);
  const sweepSeconds = thresholdRuns[0].scenario.sendSeconds;
  const chartFile = 'aws-threshold-sweep.svg';
  const fmtX = (x: number) => `${x.toFixed(2)}×`;
  const bandText = (ok: (p: SweepPoint) => boolean) => {
    const band = reproducedBand(sweep, ok);
    if (band === null) return 'at no setting of the sweep';
    const at = sweep.filter(ok).map((p) => `${p.threshold}/${p.clients}`);
    return `${band.lo === band.hi ? `at ${fmtX(band.lo)}` : `between ${fmtX(band.lo)} and ${fmtX(band.hi)}`} (threshold/clients ${at.join(', ')})`;
  };
  const verdictAt = (p: SweepPoint) => verdictOf(p.figures, AWS_LONG_CONTEXT);
  // Where the P90 gain jumps most between neighbouring thresholds at the replica's client count.
  const swept = sweep.filter((p) => p.clients === LONG_CLIENTS).sort((a, b) => a.threshold - b.threshold);
  const jumps = swept.slice(1).map((b, i) => ({
    a: swept[i],
    b,
    size: Math.abs((b.figures.ttftP90DeltaPct ?? 0) - (swept[i].figures.ttftP90DeltaPct ?? 0)),
  }));
  const jump = jumps.filter((j) => j.a.threshold > NOTEBOOK_THRESHOLD).sort((x, y) => y.size - x.size)[0];
  const below1 = sweep.filter((p) => p.x < 1);
  const above = sweep.filter((p) => p.clients === LONG_CLIENTS && p.threshold > NOTEBOOK_THRESHOLD);
  const span = (values: readonly (number | null)[]) => {
    const v = values.filter((x): x is number => x !== null);
    return v.length === 0 ? '—' : `${pct(Math.max(...v))} … ${pct(Math.min(...v))}`;
  };
  const nb64 = sweep.find((p) => p.clients === LONG_CLIENTS && p.threshold === NOTEBOOK_THRESHOLD);
  const sensThroughput = sens
    .filter(({ scenario }) => scenario.workload.includes('outputTokens=1024&'))
    .map(
      ({ scenario, result }) =>
        `${/concurrency=(\d+)/.exec(scenario.workload)?.[1]} clients ${pct(comparison(result.report, 'sagemaker-prefix-aware').outputTokensPerSecondDeltaPct)}`,
    )
    .join(', ');
  const p90Jump = jump
    ? `Here it jumps from ${pct(jump.a.figures.ttftP90DeltaPct)} at threshold ${jump.a.threshold} (${rate(jump.a.offAffinityShare)} off affinity) to ${pct(jump.b.figures.ttftP90DeltaPct)} at ${jump.b.threshold} (${rate(jump.b.offAffinityShare)}).`
    : '';
  const allFour = sweep.filter((p) => verdictAt(p).count === 4);
  const bestCount = Math.max(...sweep.map((p) => verdictAt(p).count));
  const sweepRows = sweep.map((p) => {
    const v = verdictAt(p);
    const names = [v.ttftP50 && 'P50', v.ttftP90 && 'P90', v.hit && 'hit', v.throughput && 'throughput']
      .filter(Boolean)
      .join(', ');
    return `| ${p.clients} | ${p.threshold} | ${fmtX(p.x)} | ${rate(p.offAffinityShare)} | ${p.share.min.toFixed(1)}–${p.share.max.toFixed(1)} % | ${pct(p.figures.ttftP50DeltaPct)} | ${pct(p.figures.ttftP90DeltaPct)} | ${p.figures.hitRandomPct?.toFixed(1) ?? '—'} % → ${p.figures.hitPrefixAwarePct?.toFixed(1) ?? '—'} % | ${pct(p.figures.throughputDeltaPct)} | ${v.count}${names ? ` (${names})` : ''} |`;
  });
  const scOpenLabel = scShortKey.label;
  const scOpen = verdictOf(replicaFigures(sc, scOpenLabel), AWS_SHORT_CONTEXT);
  const scClosedReport = main[2].result.report;
  const scClosedLabel = scClosedReport.comparisons[0].label;
  const scClosed = verdictOf(replicaFigures(scClosedReport, scClosedLabel), AWS_SHORT_CONTEXT);
  const shortRow = (name: string, report: BenchmarkReport, label: string, v: ReturnType<typeof verdictOf>) => {
    const f = replicaFigures(report, label);
    return `| ${name} | ${pct(f.ttftP50DeltaPct)} ${verdict(v.ttftP50)} | ${pct(f.ttftP90DeltaPct)} ${verdict(v.ttftP90)} | ${f.hitRandomPct?.toFixed(1)} % → ${f.hitPrefixAwarePct?.toFixed(1)} % ${verdict(v.hit)} | ${pct(f.throughputDeltaPct)} ${verdict(v.throughput)} |`;
  };

  const lcVerdict = verdictOf(replicaFigures(lc, 'sagemaker-prefix-aware'), AWS_LONG_CONTEXT);
  const p50Ok = lcVerdict.ttftP50;
  const p90Ok = lcVerdict.ttftP90;
  const hitOk = lcVerdict.hit;
  const tputOk = lcVerdict.throughput;
  const varianceSource = (sourcePrefix: string) => {
    const row = variance.find((v) => v.source.startsWith(sourcePrefix));
    if (!row) throw new Error(`no variance row ${sourcePrefix}`);
    return row;
  };
  const varianceDelta = (sourcePrefix: string) =>
    comparison(varianceSource(sourcePrefix).result.report, 'sagemaker-prefix-aware');
  // Largest move of any delta (points) by a source whose size is published, against the deterministic model.
  const reference = varianceDelta('none');
  const publishedShift = Math.max(
    ...['step-time jitter, CV 0.2', 'router overhead'].flatMap((source) => {
      const c = varianceDelta(source);
      return [
        c.ttftP50DeltaPct! - reference.ttftP50DeltaPct!,
        c.ttftP90DeltaPct! - reference.ttftP90DeltaPct!,
        c.outputTokensPerSecondDeltaPct! - reference.outputTokensPerSecondDeltaPct!,
      ].map(Math.abs);
    }),
  );
  const varianceRows = variance.map(({ source, why, result }) => {
    const c = comparison(result.report, 'sagemaker-prefix-aware');
    const r = strategy(result.report, 'random');
    const s = strategy(result.report, 'sagemaker-prefix-aware');
    return `| ${source} | ${why} | ${pct(c.ttftP50DeltaPct)} | ${pct(c.ttftP90DeltaPct)} | ${rate(hit(r))} → ${rate(hit(s))} | ${pct(c.outputTokensPerSecondDeltaPct)} |`;
  });

  const sensRows = sens.map(({ scenario, result }) => {
    const c = comparison(result.report, 'sagemaker-prefix-aware');
    const r = strategy(result.report, 'random');
    const s = strategy(result.report, 'sagemaker-prefix-aware');
    return `| ${scenario.title.replace('long-context, ', '')} | ${pct(c.ttftP50DeltaPct)} | ${pct(c.ttftP90DeltaPct)} | ${rate(hit(r))} → ${rate(hit(s))} | ${pct(c.outputTokensPerSecondDeltaPct)} |`;
  });

  const doc = `# Benchmarks

All figures in sections 1–4 of this page were produced by \`${command}\` (router/bench/sim-aws-replica.ts) on ${meta.date}
(${cpu}, ${meta.cores} cores, Node ${meta.node}); the whole run took ${totalSeconds.toFixed(0)} s. Full reports (markdown, JSON,
and an HTML page with TTFT CDFs and per-instance load) are written to \`reports/bench-sim/\`. Rerun the command to
reproduce them: the simulation is deterministic for a seed.

What is simulated: the router's own policy objects (\`router/src/policy\`) in front of ${INSTANCES} engine models of one
vLLM instance each, calibrated as \`${PROFILE.name}\` (Llama 3.1 70B, TP8 on one ml.p5.48xlarge: ${(PROFILE.kvCapacityBlocks * PROFILE.blockTokens).toLocaleString('en-US')}
tokens of KV cache, ${PROFILE.maxNumBatchedTokens.toLocaleString('en-US')} batched tokens per step; see [emulator.md](emulator.md)), in
virtual time. Each strategy starts with cold caches. TTFT includes the profile's ${PROFILE.requestOverheadMs} ms per-request
overhead; it does not include network time between client and endpoint. \`sagemaker-prefix-aware\` uses our defaults
(prefixLength 8192 characters, concurrencyThreshold 32) unless the label says otherwise.

## 1. AWS's long-context experiment

AWS published PREFIX_AWARE against RANDOM for Llama 3.1 70B Instruct on 7 × ml.p5.48xlarge with vLLM prefix caching
and ~8,000-token prompts. Our replica: \`${main[0].scenario.workload}\`, sending for ${main[0].scenario.sendSeconds / 60} simulated
minutes. ${lc.workload.description}.

The replica's variance (section 4 shows each source alone): step-time jitter of ${DEFAULT_VARIANCE.stepJitterCv! * 100} % per step, as measured
on vLLM, and SageMaker's managed-router overhead of ${AWS_ROUTER_OVERHEAD_MS.min}–${AWS_ROUTER_OVERHEAD_MS.max} ms per request, as AWS reports it. Nothing else:
AWS published neither the client's network path, nor output lengths, nor how often each prefix recurs, and a
default picked to land on AWS's figures would prove nothing.

| metric | AWS (published) | this simulation | within AWS's range ± ${TOLERANCE_POINTS} points (± a quarter of the figure if smaller)? |
| --- | --- | --- | --- |
| TTFT P50 vs RANDOM | ${AWS.longContext.ttftP50} | ${pct(lcSpa.ttftP50DeltaPct)} (${ms(lcRandom.ttftMs.p50)} → ${ms(lcSpaSummary.ttftMs.p50)}) | ${verdict(p50Ok)} |
| TTFT P90 vs RANDOM | ${AWS.longContext.ttftP90} | ${pct(lcSpa.ttftP90DeltaPct)} (${ms(lcRandom.ttftMs.p90)} → ${ms(lcSpaSummary.ttftMs.p90)}) | ${verdict(p90Ok)} |
| cache hit rate | ${AWS.longContext.hit} | ${rate(hit(lcRandom))} → ${rate(hit(lcSpaSummary))} (fleet ceilings of each run's requests: ${rate(lcRandom.cacheHitRate.fleetCeiling)} and ${rate(lcSpaSummary.cacheHitRate.fleetCeiling)}) | ${verdict(hitOk)} |
| throughput (output tok/s) | ${AWS.longContext.throughput} | ${pct(lcSpa.outputTokensPerSecondDeltaPct)} | ${verdict(tputOk)} |
| per-instance request share | ${AWS.longContext.share} | ${shareRange(lcSpaSummary)} | |

${resultsTable(lc)}

Simulating ${main[0].scenario.sendSeconds / 60} minutes of this traffic on seven instances took ${lcWall.map((w) => `${w.toFixed(1)} s`).join(', ')} of wall time per strategy.

Which figures it reproduces, and why not the others:
- **TTFT P50** ${p50Ok ? 'is reproduced' : 'is not reproduced, though close'} (${pct(lcSpa.ttftP50DeltaPct)} against ${AWS.longContext.ttftP50}): the median request of a group whose
  7,000-token prefix is cached prefills ≈1,000 tokens instead of ≈8,000, and that ratio comes from the profile's
  calibration, not from a tuning. Costs that caching does not shrink pull the gain towards zero: the profile's
  ${PROFILE.requestOverheadMs} ms per request is the only one here; a client ${varianceSource('network round trip 60').source.replace('network round trip ', '')} away moves it to ${pct(varianceDelta('network round trip 60').ttftP50DeltaPct)} (section 4).
- **TTFT P90** ${p90Ok ? 'is reproduced' : `is not reproduced: ours moves by ${pct(lcSpa.ttftP90DeltaPct, 0)}, AWS's by ${AWS.longContext.ttftP90}`}. ${
    p90Ok
      ? ''
      : `In the model, once a group's prefix
  is cached nearly every later request of that group is fast, so even the 90th percentile is a cache hit. None of
  the sources of variance in section 4 brings it near AWS's: jitter ${pct(varianceDelta('step-time jitter, CV 0.2').ttftP90DeltaPct, 0)}, router overhead ${pct(varianceDelta('router overhead').ttftP90DeltaPct, 0)}, spread
  output lengths ${pct(varianceDelta('output length 64').ttftP90DeltaPct, 0)}, Zipf popularity ${pct(varianceDelta('Zipf').ttftP90DeltaPct, 0)}, a client in another region ${pct(varianceDelta('network round trip 60').ttftP90DeltaPct, 0)}. What does
  move it is the concurrency threshold, which our default of 32 keeps out of play: spills past it move the
  P90 gain across AWS's range between two neighbouring thresholds, without any swept setting landing in it
  (the next subsection).`
  }
- **Throughput** ${tputOk ? 'is reproduced' : 'is not reproduced'} (${pct(lcSpa.outputTokensPerSecondDeltaPct)}). It depends on how much of the GPU time prefill takes, i.e. on output length and load. With 1,024 output
  tokens and 64 clients we land on AWS's +15–16 %; with 256 output tokens the saved prefill is a larger share of the
  work and the gain is much larger (section 3). AWS did not publish output length or client count.
- **Hit rate** ${hitOk ? 'is reproduced' : 'is not reproduced'} (${rate(hit(lcRandom))} → ${rate(hit(lcSpaSummary))} against ${AWS.longContext.hit}). RANDOM's figure is reproduced by
  construction: the 550-group default is sized from the KV capacity so that it lands near AWS's 25 % (see
  [workloads.md](workloads.md)). PREFIX_AWARE's is not sized: it reaches the fleet ceiling (${rate(lcSpaSummary.cacheHitRate.fleetCeiling)}), because each
  group's prefix lives on exactly one instance and the fleet holds them all${withinPublished(hit(lcSpaSummary)! * 100, AWS_LONG_CONTEXT.hitPrefixAware) ? '' : `, ${(hit(lcSpaSummary)! * 100 - AWS_LONG_CONTEXT.hitPrefixAware.max).toFixed(1)} points above AWS's ≈82 %: spills past the concurrency threshold lower it (the next subsection), and a real fleet may lose hits to evictions our model does not see; AWS did not publish enough to say which`}.
- **least-outstanding-requests** balances request counts, not prefill work, and is no better than RANDOM here
  (TTFT P50 ${pct(comparison(lc, 'least-outstanding-requests').ttftP50DeltaPct)}, P90 ${pct(comparison(lc, 'least-outstanding-requests').ttftP90DeltaPct)}). In a closed loop with a fixed output length, requests admitted
  together on an instance finish together, and LOR sends every replacement to the instance that just freed a slot,
  so replacements arrive in bursts and queue behind each other's prefill; RANDOM scatters them. Real output lengths
  vary, which weakens this synchronisation.
- **Load share.** Rendezvous hashing of 550 keys over 7 instances gives a share spread of ${shareRange(lcSpaSummary)}, a little
  wider than AWS's ${AWS.longContext.share}; spills at a lower threshold even it out (the next subsection).

### Spills at the concurrency threshold

Facts AWS published or implied about the long-context setup: 7 × ml.p5.48xlarge, Llama 3.1 70B, vLLM with prefix
caching, ~8,000-token prompts, an hour against RANDOM, each instance's share 13.3–15.4 %; the API's rule for the
threshold: "When in-flight requests on the prefix-selected instance reach this threshold, the endpoint routes the
request to an instance with more available capacity" ([PrefixAwareRoutingConfig](https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_PrefixAwareRoutingConfig.html),
modelled in \`router/src/policy/sagemaker-prefix-aware-policy.ts\`); and AWS's sample notebook sets
\`ConcurrencyThreshold\` 10. Not published: the experiment's own ConcurrencyThreshold and PrefixLength, the client
count, the output length. (The announcement post and notebook are cited from DESIGN.md §5; this run could not
re-read them.) With a closed loop of C clients on 7 instances, an instance holds C ÷ 7 requests on average, so what
decides how often requests spill is the threshold ÷ (C ÷ 7): below about 1× the affine instance sits at the
threshold much of the time.

The sweep: the replica of section 1 (same workload and variance, ${sweepSeconds / 60} simulated minutes, RANDOM at the same
client count as the baseline) with ConcurrencyThreshold ${SWEEP_THRESHOLDS.join(', ')} at ${LONG_CLIENTS} clients, and the notebook's
${NOTEBOOK_THRESHOLD} at ${NOTEBOOK_CLIENTS.join(', ')} clients. "off affinity": share of requests sent off their prefix's instance,
because it was at the threshold (a spill to the instance with the fewest in flight) or because every instance was
(then the fewest in flight too; AWS documents only the first case).

| clients | ConcurrencyThreshold | threshold ÷ (clients ÷ 7) | off affinity | per-instance share | Δ TTFT P50 | Δ TTFT P90 | hit rate random → prefix-aware | Δ output tok/s | AWS figures reproduced (of 4) |
| ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | --- |
${sweepRows.join('\n')}

![P50, P90 reduction and hit rate against ConcurrencyThreshold ÷ per-instance load, with AWS's ranges as bands](${chartFile})

(\`${chartFile}\`, written by \`${command}\` from these runs.) Within AWS's range ± ${TOLERANCE_POINTS} points:
- TTFT P50 ${bandText((p) => verdictAt(p).ttftP50)};
- TTFT P90 ${bandText((p) => verdictAt(p).ttftP90)};
- hit rate (both strategies) ${bandText((p) => verdictAt(p).hit)};
- throughput ${bandText((p) => verdictAt(p).throughput)};
- per-instance share inside AWS's ${AWS_LONG_CONTEXT_SHARE.min}–${AWS_LONG_CONTEXT_SHARE.max} % (a fact that could tell settings apart: spills even the load out) ${bandText((p) => p.share.min >= AWS_LONG_CONTEXT_SHARE.min && p.share.max <= AWS_LONG_CONTEXT_SHARE.max)}.

${
  allFour.length > 0
    ? `All four land together at ${allFour.map((p) => `threshold ${p.threshold} with ${p.clients} clients (${fmtX(p.x)})`).join('; ')}.`
    : `No setting of the sweep lands all four; the most any lands is ${bestCount}.`
}

How spills move each figure (${LONG_CLIENTS} clients, threshold swept):
- Below about 1× every instance is at the threshold most of the time, nearly every request goes to the instance
  with the fewest in flight, and PREFIX_AWARE becomes least-outstanding-requests: no gain on P50 or hit rate, and
  a P90 penalty like LOR's in section 1.
- Far above 1× spills are rare and the replica behaves as in section 1: P90 gain about twice AWS's.
- In between, spilled requests lose their cached prefix and queue their full prefill on another instance. The P50
  (the affine majority) hardly moves; the P90 does, and abruptly: it is a cache hit while fewer than one request
  in ten misses (first requests of a group plus spills) and a miss once more do. ${p90Jump}
  AWS's −33…37 % is a P90 that sits on that edge, neither a clean hit nor a clean miss: a third faster, not four
  fifths. A setting lands there only by sitting on the edge, which the next threshold step leaves again:
  that is how sensitive the figure is, and why no setting here is offered as AWS's.
- The hit rate rises with the threshold as spills fall; throughput is within AWS's range wherever spills are
  rare, since it depends on the saved prefill (section 3: on output length and client count, neither published).

What AWS's description supports, setting by setting:
- Below 1×: excluded. P50 moves by ${span(below1.map((p) => p.figures.ttftP50DeltaPct))} (no gain) and the hit rate is at most ${Math.max(...below1.map((p) => p.figures.hitPrefixAwarePct ?? 0)).toFixed(1)} %.
${
  nb64
    ? `- The notebook's ${NOTEBOOK_THRESHOLD} with ${LONG_CLIENTS} clients (${fmtX(nb64.x)}): P50 ${pct(nb64.figures.ttftP50DeltaPct)} lands, but the hit rate (${nb64.figures.hitPrefixAwarePct?.toFixed(1)} %) and P90 (${pct(nb64.figures.ttftP90DeltaPct)}) do not: ${rate(nb64.offAffinityShare)} of requests spill.
`
    : ''
}- Above it (${LONG_CLIENTS} clients, thresholds ${NOTEBOOK_THRESHOLD + 1}–${SWEEP_THRESHOLDS[SWEEP_THRESHOLDS.length - 1]}), the hit rate and throughput land where spills are rare, the P50 is ${span(above.map((p) => p.figures.ttftP50DeltaPct))}
  against AWS's −71…77 %${jump ? `, and the P90 is ${span(above.filter((p) => p.threshold <= jump.a.threshold).map((p) => p.figures.ttftP90DeltaPct))} up to threshold ${jump.a.threshold} and ${span(above.filter((p) => p.threshold >= jump.b.threshold).map((p) => p.figures.ttftP90DeltaPct))} from ${jump.b.threshold}: AWS's −33…37 % falls in the gap between two neighbouring thresholds` : ''}.
- Client count: the throughput gain grows with clients (section 3, 1,024 output tokens: ${sensThroughput}), and AWS's +15–16 %
  fits 64 clients at 1,024 output tokens; but output length is unpublished and trades against client count.

So the published facts do not pin a configuration, and no setting of this sweep lands all four figures. They do
name the mechanism that the variance sources of section 4 lacked: spills at the concurrency threshold put AWS's
P90 within reach, on the edge where about one request in ten misses, of settings that keep P50, hit rate and
throughput near AWS's. How wide that edge is in a real fleet, whose arrivals are less regular than this closed
loop's, is not measured here.

## 2. AWS's short-context experiment

AWS's second experiment: ShareGPT-style multi-turn chat on the same fleet for 30 minutes, PREFIX_AWARE against
RANDOM: TTFT P50 ${AWS.shortChat.ttftP50}, P90 ${AWS.shortChat.ttftP90}, hit rate ${AWS.shortChat.hit}, throughput ${AWS.shortChat.throughput}. Facts stated:
multi-turn conversations whose prompts grow with each turn, short prompts, 30 minutes, the long experiment's
fleet. Not stated: turn counts, prompt and reply lengths, system prompts, PrefixLength, load. The replica uses
the \`short-chat\` workload's own defaults (${sc.workload.description}; see [workloads.md](workloads.md)),
the replica's variance (section 1), ${main[1].scenario.sendSeconds / 60} simulated minutes, open loop at its default 4 req/s
(\`${main[1].scenario.workload}\`) and, since a throughput gain needs clients that wait for their replies, a closed loop
of ${SHORT_CLOSED_CLIENTS} clients (\`${main[2].scenario.workload}\`). PrefixLength is 1,024 characters, the API's minimum: with the
workload's prompts, shorter than our default 8,192 for most turns, no longer key is stable across a conversation's turns (below).

| replica | Δ TTFT P50 (AWS ${AWS.shortChat.ttftP50}) | Δ TTFT P90 (AWS ${AWS.shortChat.ttftP90}) | hit rate (AWS ${AWS.shortChat.hit}) | Δ throughput (AWS ${AWS.shortChat.throughput}) |
| --- | --- | --- | --- | --- |
${shortRow('open loop, 4 req/s', sc, scOpenLabel, scOpen)}
${shortRow(`closed loop, ${SHORT_CLOSED_CLIENTS} clients`, scClosedReport, scClosedLabel, scClosed)}

Open loop, every strategy completes the offered load, so throughput cannot move (Δ 0): the gain shows only as
latency. Closed loop, the saved prefill of short prompts is a small share of each request's GPU time, so
throughput moves by a few percent at most (${pct(replicaFigures(scClosedReport, scClosedLabel).throughputDeltaPct)} here, against AWS's ${AWS.shortChat.throughput}). The P50 and P90 gains are a few points larger
than AWS's: they depend on how much of each turn's prompt is history that RANDOM recomputes, which AWS did not
publish either. The hit rates depend on how many turns and system prompts the
conversations have, which AWS did not publish: RANDOM already finds the shared system prompts cached on most
instances, and PREFIX_AWARE's ceiling is what the conversations' own repeats allow.

Open loop, all strategies:

${resultsTable(sc)}

Closed loop of ${SHORT_CLOSED_CLIENTS}:

${resultsTable(scClosedReport)}

- With the default prefixLength of 8192 characters, prefix-aware routing changes TTFT P50 by ${pct(scDefault.ttftP50DeltaPct)}: most
  conversations here are shorter than 8,192 characters, so the routing key is the whole conversation and changes at
  every turn; each turn lands on a new instance, exactly as with RANDOM.
- With prefixLength 1024 (about the length of the shared system prompts) the key is the system prompt, stable
  across turns: P50 ${pct(scShortKey.ttftP50DeltaPct)}, P90 ${pct(scShortKey.ttftP90DeltaPct)} (open loop). Its price is
  imbalance: ${strategy(sc, scShortKey.label).balance.requestsMaxOverMean?.toFixed(2)}× max/mean requests per instance (shares ${shareRange(strategy(sc, scShortKey.label))}), since only 8 system
  prompts key 7 instances; the concurrencyThreshold spill is what keeps the busiest instance from saturating.
- **Set prefixLength to the length of the content your requests share, and no longer than the first request of a
  conversation**, or affinity breaks between turns. Simulate your own traffic before choosing:
  \`npx prefix-router simulate --workload 'short-chat?…' --policy 'sagemaker-prefix-aware?prefixLength=N' …\`.

## 3. Sensitivity: load and output length (long-context)

\`sagemaker-prefix-aware\` against \`random\`, ${seconds / 60} simulated minutes each.

| load | Δ TTFT P50 | Δ TTFT P90 | hit rate random → prefix-aware | Δ output tok/s |
| --- | ---: | ---: | --- | ---: |
${sensRows.join('\n')}

Open loop at a rate the fleet sustains, throughput is the offered load for every strategy (Δ ≈ 0): the gain shows
as latency. Closed loop, the saved prefill turns into more completed requests.

## 4. Variance sources

The replica of section 1 (\`random\` against \`sagemaker-prefix-aware\`, ${seconds / 60} simulated minutes) with one source of the variance
real fleets have switched on at a time, then the replica's defaults together. AWS's figures: TTFT P50 ${AWS.longContext.ttftP50},
P90 ${AWS.longContext.ttftP90}, hit rate ${AWS.longContext.hit}, throughput ${AWS.longContext.throughput}.

| source | size, and where it comes from | Δ TTFT P50 | Δ TTFT P90 | hit rate random → prefix-aware | Δ output tok/s |
| --- | --- | ---: | ---: | --- | ---: |
${varianceRows.join('\n')}

Every source is off unless asked for, and seeded, so a run repeats exactly:

| source | switch | default, and why |
| --- | --- | --- |
| step-time jitter | \`simulate --step-jitter CV\`; \`stepJitterCv\` | off in \`simulate\` (the model stays exact); ${MEASURED_STEP_JITTER_CV * 100} % in this replica: vLLM's nightly latency benchmark (buildkite.com/vllm/performance-benchmark, build 9523: Llama 3 70B TP4, batch 8, 128 output tokens, median 3,990.39 ms, P99 3,991.87 ms) puts the spread of a step at ≈0.2 % |
| managed-router overhead | \`simulate --router-overhead MIN..MAX\` (ms) | off in \`simulate\` (our router's own overhead is measured in [router.md](router.md)); ${AWS_ROUTER_OVERHEAD_MS.min}–${AWS_ROUTER_OVERHEAD_MS.max} ms in this replica, AWS's figure for its managed routing |
| client–endpoint network | \`simulate --network-rtt MIN..MAX\` (ms) | off: it depends on where your clients are; it adds the same to every strategy, so it shrinks relative gains |
| output-length distribution | workload option \`outputTokens=MIN..MAX\` (uniform) | the workload's own default; the replica keeps 1,024 fixed because AWS published no distribution |
| group popularity | workload options \`popularity=zipf&zipfExponent=S\` | uniform: AWS described groups, not how often each recurs |

How to read it:
- The two sources whose size is published, step-time jitter and the managed router's overhead, move no delta by
  more than ${publishedShift.toFixed(1)} points: they are too small against prefills of hundreds of milliseconds.
- Spread output lengths (same mean) move the P90 gain from ${pct(varianceDelta('none').ttftP90DeltaPct)} to ${pct(varianceDelta('output length 64').ttftP90DeltaPct)}: completions no longer
  come in lockstep, but a cached group's request is still fast.
- Skewed popularity changes the picture: RANDOM already finds the popular prefixes cached on every instance
  (${rate(hit(strategy(varianceSource('Zipf').result.report, 'random')))} hits), so the median gain falls to ${pct(varianceDelta('Zipf').ttftP50DeltaPct)} while the tail, made of the rarely seen groups, keeps ${pct(varianceDelta('Zipf').ttftP90DeltaPct)}.
- A client far from the endpoint adds the same tens of milliseconds to both strategies: P50 ${pct(varianceDelta('network round trip 60').ttftP50DeltaPct)}, P90 ${pct(varianceDelta('network round trip 60').ttftP90DeltaPct)}.
- None of these alone brings the P90 gain near AWS's ${AWS.longContext.ttftP90} while keeping the P50 gain near ${AWS.longContext.ttftP50}. The
  router's own spills at the concurrency threshold move it across AWS's range (section 1, "Spills at the
  concurrency threshold"), though no swept setting lands inside it; not modelled: instance-to-instance speed
  differences.

## Router overhead

See [router.md](router.md) (\`npm run bench:router\`): the decision and proxy overhead of the live router, against
AWS's reported 1.3–1.9 ms for its managed routing.
`;
  // This command owns the part between its markers; the sections other commands write (bench:policies, the
  // fleet-scale and planning sections) stay as they are.
  const previous = await readFile(join('docs', 'benchmarks.md'), 'utf8').catch(() => '');
  await writeFile(join('docs', 'benchmarks.md'), withMarkedSection(previous, BENCH_SIM_MARKERS, doc, 'prepend'));
  await writeFile(join('docs', chartFile), thresholdChart(sweep, AWS_LONG_CONTEXT));
  process.stdout.write(
    `wrote docs/benchmarks.md, docs/aws-threshold-sweep.svg and reports/bench-sim/ in ${totalSeconds.toFixed(0)} s\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:sim failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
