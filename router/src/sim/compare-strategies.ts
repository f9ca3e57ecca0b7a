import type { EngineProfile } from '../emulator/engine-profile';
import type { PolicyConfig } from '../policy';
import { CeilingTracker } from './report/ceilings';
import { buildReport, type BenchmarkReport, type StrategyRunInput } from './report/report-model';
import { simulate, toStrategyRun, type SimulationProgress, type SimulationResult } from './simulator';
import type { LoadShape } from './workload/load-shape';
import type { Workload } from './workload/workload';

/**
 * Simulates one workload under several routing policies, each on a fresh fleet with cold caches, and builds
 * one report with every strategy side by side. Used by `prefix-router simulate` and `npm run bench:sim`.
 */
export interface StrategyComparisonConfig {
  readonly workload: Workload;
  readonly policies: readonly PolicyConfig[];
  readonly instances: number;
  /** Router replicas sharing the traffic round-robin, with no shared state (default 1). */
  readonly routers?: number;
  readonly profile: EngineProfile;
  readonly seed?: number;
  readonly load?: LoadShape;
  readonly maxRequests?: number;
  readonly warmupMs?: number;
  /** No request is sent at or after this virtual time. */
  readonly sendUntilMs?: number;
  /** Label or policy name of the baseline (default `random` when it is among the policies). */
  readonly baseline?: string;
  readonly title?: string;
  readonly notes?: readonly string[];
  readonly onStrategyStart?: (policy: PolicyConfig, index: number) => void;
  readonly onProgress?: (policy: PolicyConfig, progress: SimulationProgress) => void;
  readonly onStrategyDone?: (policy: PolicyConfig, result: SimulationResult) => void;
}

export interface StrategyComparison {
  readonly report: BenchmarkReport;
  readonly results: readonly SimulationResult[];
}

/** A readable, unique label for a policy config: its name, plus options when the same name appears twice. */
export function policyLabels(policies: readonly PolicyConfig[]): string[] {
  return policies.map((policy) => {
    const sameName = policies.filter((p) => p.name === policy.name).length > 1;
    if (!sameName) return policy.name;
    const { name, ...options } = policy;
    const parts = Object.entries(options).map(([k, v]) => `${k}=${String(v)}`);
    return parts.length === 0 ? name : `${name} (${parts.join(', ')})`;
  });
}

export function compareStrategies(config: StrategyComparisonConfig): StrategyComparison {
  if (config.policies.length === 0) throw new RangeError('policies must name at least one policy');
  const labels = policyLabels(config.policies);
  if (new Set(labels).size !== labels.length) throw new RangeError(`policies must differ (got ${labels.join(', ')})`);
  // Ceilings depend only on the requests sent, in send order; a closed loop sends more under a faster policy,
  // so every run is scored against the ceilings of its own requests. The report shows the first run's.
  const newTracker = () => new CeilingTracker({ fleetCapacityBlocks: config.instances * config.profile.kvCapacityBlocks, blockTokens: config.profile.blockTokens });
  const trackers: CeilingTracker[] = [];
  const results: SimulationResult[] = [];
  const runs: StrategyRunInput[] = [];
  config.policies.forEach((policy, index) => {
    config.onStrategyStart?.(policy, index);
    const result = simulate({
      workload: config.workload,
      policy,
      instances: config.instances,
      routers: config.routers,
      profile: config.profile,
      seed: config.seed,
      load: config.load,
      maxRequests: config.maxRequests,
      warmupMs: config.warmupMs,
      sendUntilMs: config.sendUntilMs,
      ceilings: (trackers[index] = newTracker()),
      onProgress: config.onProgress ? (p) => config.onProgress!(policy, p) : undefined,
    });
    config.onStrategyDone?.(policy, result);
    results.push(result);
    runs.push({ ...toStrategyRun(result, labels[index]), ceilings: trackers[index].result() });
  });
  const notes = [...(config.notes ?? [])];
  const fleet = trackers.map((t) => t.result().fleetHitRate ?? 0);
  if (fleet.some((f) => Math.abs(f - fleet[0]) > 0.001)) {
    notes.push(
      `The strategies sent different requests (closed loop: a faster strategy sends more), so each is scored against the fleet ceiling of its own requests: ${labels
        .map((l, i) => `${l} ${(fleet[i] * 100).toFixed(1)} %`)
        .join(', ')}. The ceilings table shows the first strategy's.`,
    );
  }
  const wallSeconds = results.reduce((s, r) => s + r.wallMs, 0) / 1000;
  const report = buildReport({
    mode: 'simulated',
    title: config.title,
    workload: config.load ? { ...config.workload, load: config.load } : config.workload,
    environment: {
      instances: config.instances,
      ...(config.routers !== undefined && config.routers > 1 ? { 'router replicas (round-robin, no shared state)': config.routers } : {}),
      profile: config.profile.name,
      'KV capacity per instance (tokens)': config.profile.kvCapacityBlocks * config.profile.blockTokens,
      'max batched tokens per step': config.profile.maxNumBatchedTokens,
      'max sequences': config.profile.maxNumSeqs,
      seed: config.seed ?? 1,
      'warm-up (s)': (config.warmupMs ?? 0) / 1000,
      ...(config.sendUntilMs !== undefined ? { 'send window (s)': config.sendUntilMs / 1000 } : {}),
      'simulation wall time (s)': Math.round(wallSeconds * 10) / 10,
    },
    baseline: config.baseline,
    ceilings: trackers[0].result(),
    runs,
    notes,
  });
  return { report, results };
}
