import { fleetWithEngineArgs, type EngineArgs } from '../emulator/engine-args';
import { fleetGroups, fleetText, resolveProfile, type EngineProfile } from '../emulator/engine-profile';
import { ProgressReporter, runLiveBenchmark, toStrategyRun, type ProgressMode } from '../benchmark';
import type { PolicyConfig } from '../policy';
import { policyOptionsOf } from '../policy/policy-config';
import { formatPolicySpec } from '../policy/policy-spec';
import { policyLabels } from '../sim/compare-strategies';
import { buildReport, writeReport, type BenchmarkReport, type ReportFiles, type StrategyRunInput } from '../report';
import { formatDeltaPct, formatMs, formatNumber, formatPercent } from '../report/format';
import { parseWorkloadSpec, type Workload } from '../workload';
import { startService, type ServiceHandle } from './service-handle';

/**
 * `npm run demo`: the project's main job on an embedded default, no AWS account needed. For each strategy it
 * starts a fresh fleet of emulated p5 vLLM instances (cold caches) and the real router in front of them, each
 * in its own process on loopback, drives the same long-context workload through the router with the streaming
 * benchmark client, and ends with one report comparing the strategies.
 */
export interface DemoOptions {
  readonly instances: number;
  readonly profile: string;
  /** A mixed fleet (`--instances 2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b`): one profile per instance; the router then learns their prefill speeds. */
  readonly profiles?: readonly EngineProfile[];
  /** Emulators run this many times faster than the modelled hardware; measured times are scaled back. */
  readonly timeScale: number;
  /** Model time each strategy sends for (wall time = this ÷ timeScale). */
  readonly durationMs: number;
  readonly workload: Workload;
  readonly policies: readonly PolicyConfig[];
  readonly seed: number;
  readonly outDir: string;
  readonly progress: ProgressMode;
  /** vLLM engine arguments every emulated engine runs with (`--engine-arg`); default none. */
  readonly engineArgs?: EngineArgs;
}

/**
 * Sized with the simulator (`prefix-router simulate --instances 4 --duration 120 --workload …`): 300 groups of
 * 7,000-token prefixes are more than one p5 instance's KV cache holds (≈190), but a quarter of them fits, so
 * RANDOM keeps evicting what PREFIX_AWARE keeps. 32 output tokens keep the token stream light for a 2-core laptop.
 */
export const DEMO_WORKLOAD =
  'long-context?groups=300&prefixTokens=7000&suffixTokens=900..1100&outputTokens=32&duration=3600&concurrency=16';

export const DEMO_DEFAULTS = {
  instances: 4,
  profile: 'p5-llama-3.1-70b',
  timeScale: 2,
  durationSeconds: 120,
  policies: [
    { name: 'random' },
    { name: 'least-outstanding-requests' },
    { name: 'sagemaker-prefix-aware' },
    { name: 'cache-aware' },
  ] as readonly PolicyConfig[],
  seed: 1,
} as const;

export interface DemoResult {
  readonly report: BenchmarkReport;
  readonly files: ReportFiles;
}

export async function runDemo(
  options: DemoOptions,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<DemoResult> {
  const profile = options.profiles?.[0] ?? resolveProfile(options.profile);
  const engineFleet =
    options.engineArgs === undefined
      ? options.profiles
      : fleetWithEngineArgs(
          options.profiles ?? Array<EngineProfile>(options.instances).fill(profile),
          options.engineArgs,
        );
  const labels = policyLabels(options.policies);
  const runs: StrategyRunInput[] = [];
  let model = '';
  for (const [index, policy] of options.policies.entries()) {
    if (signal?.aborted) break;
    log(
      `[${index + 1}/${options.policies.length}] ${formatPolicySpec(policy)}: ${options.profiles !== undefined ? `emulated ${fleetText(options.profiles)}` : `${options.instances} emulated ${profile.name} instances`} (cold caches) + router`,
    );
    const strategy = { policy, label: labels[index], profile, engineFleet };
    const { run, modelName } = await runStrategy(options, strategy, log, signal);
    model = modelName ?? model;
    runs.push(run);
  }
  if (runs.length === 0) throw new Error('the demo was stopped before any strategy ran');
  const report = buildReport({
    title: 'prefix-router demo: routing strategies on emulated p5 instances',
    mode: 'live',
    workload: options.workload,
    environment: demoEnvironment(options, profile, model),
    baseline: labels.includes('random') ? 'random' : undefined,
    ceilings: runs[0].ceilings ?? null,
    runs,
    notes: [
      `Emulated instances ran ${options.timeScale}× faster than the modelled hardware; every latency was measured on the client and multiplied by ${options.timeScale}, so it reads in model time (router and loopback overhead are scaled too).`,
      'Each strategy ran on a fresh fleet with cold caches. Same workload, same order, same seed.',
    ],
  });
  const files = await writeReport(report, options.outDir);
  return { report, files };
}

/** One strategy of the demo: its policy, its report label, and the fleet's profiles (engine arguments applied). */
interface DemoStrategy {
  readonly policy: PolicyConfig;
  readonly label: string;
  readonly profile: EngineProfile;
  readonly engineFleet: readonly EngineProfile[] | undefined;
}

/** Runs the workload through a router with one strategy in front of a fresh emulated fleet, then stops both. */
async function runStrategy(
  options: DemoOptions,
  strategy: DemoStrategy,
  log: (line: string) => void,
  signal: AbortSignal | undefined,
): Promise<{ run: StrategyRunInput; modelName: string | undefined }> {
  const { policy, label, profile, engineFleet } = strategy;
  const services: ServiceHandle[] = [];
  try {
    const fleet = await startService({
      kind: 'emulators',
      instances: options.instances,
      profile: options.profile,
      ...(engineFleet !== undefined ? { profiles: engineFleet } : {}),
      timeScale: options.timeScale,
    });
    services.push(fleet);
    const router = await startService({
      kind: 'router',
      backends: fleet.urls,
      policy,
      seed: options.seed,
      ...(options.profiles !== undefined ? { learnPrefillSpeeds: true } : {}),
    });
    services.push(router);
    const progress = new ProgressReporter({ mode: options.progress, label: `    ${label}` });
    const result = await runLiveBenchmark({
      url: router.urls[0],
      workload: options.workload,
      model: fleet.modelName,
      timeScale: options.timeScale,
      durationMs: options.durationMs,
      backendMetricsUrls: fleet.urls,
      ceilings: {
        fleetCapacityBlocks: (options.profiles ?? Array<EngineProfile>(options.instances).fill(profile)).reduce(
          (sum, p) => sum + p.kvCapacityBlocks,
          0,
        ),
        blockTokens: profile.blockTokens,
      },
      signal,
      onProgress: progress.update,
    });
    progress.end();
    const run = toStrategyRun(result, { name: policy.name, options: policyOptionsOf(policy) }, router.ids, label);
    log(
      `    ${result.sent} requests in ${(result.wallMs / 1000).toFixed(0)} s${result.failed > 0 ? `, ${result.failed} failed` : ''}`,
    );
    return {
      run: { ...withPositionalInstances(run, router.ids), ceilings: result.ceilings },
      modelName: fleet.modelName,
    };
  } finally {
    await Promise.all(services.reverse().map((s) => s.stop()));
  }
}

/** The report's environment: the fleet (or the one profile), the model, the time scale and the KV capacity. */
function demoEnvironment(options: DemoOptions, profile: EngineProfile, model: string): Record<string, string | number> {
  return {
    instances: options.instances,
    ...(options.profiles !== undefined
      ? {
          fleet: fleetText(options.profiles),
          'prefill speeds': 'learned by the router from observed TTFTs (--learn-prefill-speeds on)',
        }
      : { profile: profile.name }),
    model,
    'time scale': options.timeScale,
    'send window per strategy (model s)': options.durationMs / 1000,
    'KV capacity per instance (tokens)':
      options.profiles !== undefined
        ? fleetGroups(options.profiles)
            .map((g) => `${g.count} × ${g.profile.kvCapacityBlocks * g.profile.blockTokens}`)
            .join(' + ')
        : profile.kvCapacityBlocks * profile.blockTokens,
  };
}

/**
 * Every strategy runs on a fresh fleet on new ports; naming instances by position (instance-0 …) lets the
 * report line up the same slot across strategies.
 */
function withPositionalInstances(run: StrategyRunInput, ids: readonly string[]): StrategyRunInput {
  const name = (id: string | null) => {
    const i = id === null ? -1 : ids.indexOf(id);
    return i < 0 ? id : `instance-${i}`;
  };
  return {
    ...run,
    instances: run.instances.map((id) => name(id) ?? id),
    records: Array.from(run.records, (r) => ({ ...r, instance: name(r.instance) })),
  };
}

/** A compact table for the terminal: the columns that decide whether prefix-aware routing pays off. */
export function demoSummary(report: BenchmarkReport): string {
  const header = [
    'strategy',
    'requests',
    'TTFT P50',
    'TTFT P90',
    'hit rate',
    'of ceiling',
    'output tok/s',
    'vs ' + (report.baseline ?? 'baseline'),
  ];
  const rows = report.strategies.map((s) => {
    const c = report.comparisons.find((x) => x.label === s.label);
    const versus = c ? `P50 ${formatDeltaPct(c.ttftP50DeltaPct)}, P90 ${formatDeltaPct(c.ttftP90DeltaPct)}` : '—';
    return [
      s.label,
      formatNumber(s.requests),
      formatMs(s.ttftMs.p50),
      formatMs(s.ttftMs.p90),
      formatPercent(s.cacheHitRate.engineReported ?? s.cacheHitRate.prometheus),
      formatPercent(s.cacheHitRate.ofFleetCeiling, 0),
      formatNumber(s.throughput.outputTokensPerSecond),
      versus,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function parseDemoWorkload(spec: string | undefined): Workload {
  return parseWorkloadSpec(spec ?? DEMO_WORKLOAD);
}
