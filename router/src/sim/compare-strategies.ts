import { fleetGroups, fleetText, type EngineProfile } from '../emulator/engine-profile';
import type { FlowControlSettings } from '../core/flow-control';
import { policyDefinition, type PolicyConfig } from '../policy';
import { withClientLatency, type ClientLatency } from './client-latency';
import { CeilingTracker, type Ceilings } from '../report/ceilings';
import { buildReport, type BenchmarkReport, type StrategyRunInput } from '../report/report-model';
import {
  simulate,
  toStrategyRun,
  type EngineRestart,
  type ReplicaSharing,
  type SimulationProgress,
  type SimulationResult,
} from './simulator';
import { workloadWindow, type ArrivalWindow } from '../workload/arrival-window';
import type { LoadShape } from '../workload/load-shape';
import type { Workload } from '../workload/workload';
import type { SimulatedKvEventSettings } from './simulated-kv-events';

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
  /** Diagnostics: what the replicas share (see SimulationConfig.replicaSharing). */
  readonly replicaSharing?: ReplicaSharing;
  /** Replicas fetch every instance's published state this often (ms; default 0 = never; see SimulationConfig.observeIntervalMs). */
  readonly observeIntervalMs?: number;
  readonly profile: EngineProfile;
  /** One profile per instance for a mixed fleet (see SimulationConfig.profiles); default `instances` × `profile`. */
  readonly profiles?: readonly EngineProfile[];
  /** What the routers know of each instance's prefill speed (see SimulationConfig.prefillSpeeds; default 'profile'). */
  readonly prefillSpeeds?: 'profile' | 'learned' | 'none';
  readonly seed?: number;
  /** Step-time jitter (coefficient of variation per engine step; default 0). */
  readonly stepJitterCv?: number;
  /** Which set of jitter streams (see SimulationConfig.stepJitterStream; default 0). */
  readonly stepJitterStream?: number;
  /** The router's flow control by priority class (see SimulationConfig.flowControl; default on). */
  readonly flowControl?: FlowControlSettings;
  /** The routers follow the engines' KV events (see SimulationConfig.kvEvents; default none). */
  readonly kvEvents?: SimulatedKvEventSettings;
  /** An engine restarts mid-run (see SimulationConfig.engineRestart; default none). */
  readonly engineRestart?: EngineRestart;
  /** Share of requests sent around the routers (see SimulationConfig.bypassShare; default 0). */
  readonly bypassShare?: number;
  /** Router overhead and network time the client sees (default none). */
  readonly clientLatency?: ClientLatency;
  readonly load?: LoadShape;
  readonly maxRequests?: number;
  readonly warmupMs?: number;
  /** No request is sent at or after this virtual time. */
  readonly sendUntilMs?: number;
  /** Replay only this stretch of the workload's arrivals, shifted to start at 0 (see workloadWindow). */
  readonly arrivalWindow?: ArrivalWindow;
  /** Generate and hash the workload on a worker thread ahead of each simulation (see SimulationConfig.promptWorker). */
  readonly promptWorker?: boolean;
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

/**
 * A readable label for a policy config: its name, plus every option that differs from its default, even when
 * only one policy of that name ran (a tuned policy must not read as the default one in a report).
 */
export function policyLabels(policies: readonly PolicyConfig[]): string[] {
  // An option at its default is still shown when another strategy of the same name sets it otherwise (a sweep),
  // so the compared dimension reads the same on every row.
  const varies = (name: string, key: string): boolean =>
    new Set(policies.filter((p) => p.name === name).map((p) => (p as unknown as Record<string, unknown>)[key])).size >
    1;
  return policies.map((policy) => {
    const { name, ...options } = policy;
    const parts = Object.entries(options)
      .filter(
        ([k, v]) =>
          v !== undefined &&
          (policyDefinition(name)?.options.find((o) => o.name === k)?.default !== v || varies(name, k)),
      )
      .map(([k, v]) => `${k}=${String(v)}`);
    return parts.length === 0 ? name : `${name} (${parts.join(', ')})`;
  });
}

/** One strategy's simulation and the hit-rate ceilings of the requests it sent. */
export interface StrategyOutcome {
  readonly result: SimulationResult;
  readonly ceilings: Ceilings;
}

/** The settings of one strategy's run: all a worker thread needs (plain data; the workload travels as its spec). */
export type StrategyRunSettings = Pick<
  StrategyComparisonConfig,
  | 'instances'
  | 'routers'
  | 'replicaSharing'
  | 'observeIntervalMs'
  | 'profile'
  | 'profiles'
  | 'prefillSpeeds'
  | 'seed'
  | 'stepJitterCv'
  | 'stepJitterStream'
  | 'flowControl'
  | 'kvEvents'
  | 'engineRestart'
  | 'bypassShare'
  | 'load'
  | 'maxRequests'
  | 'warmupMs'
  | 'sendUntilMs'
  | 'arrivalWindow'
  | 'promptWorker'
>;

/** Simulates one strategy on a fresh fleet with cold caches (what compareStrategies does for each policy). */
export function simulateStrategy(
  workload: Workload,
  policy: PolicyConfig,
  settings: StrategyRunSettings,
  onProgress?: (progress: SimulationProgress) => void,
): StrategyOutcome {
  // Ceilings depend only on the requests sent, in send order; a closed loop sends more under a faster policy,
  // so every run is scored against the ceilings of its own requests. The report shows the first run's.
  const fleetCapacityBlocks =
    settings.profiles === undefined
      ? settings.instances * settings.profile.kvCapacityBlocks
      : settings.profiles.reduce((sum, p) => sum + p.kvCapacityBlocks, 0);
  const tracker = new CeilingTracker({ fleetCapacityBlocks, blockTokens: settings.profile.blockTokens });
  const result = simulate({
    workload: settings.arrivalWindow === undefined ? workload : workloadWindow(workload, settings.arrivalWindow),
    policy,
    instances: settings.instances,
    routers: settings.routers,
    replicaSharing: settings.replicaSharing,
    observeIntervalMs: settings.observeIntervalMs,
    profile: settings.profile,
    profiles: settings.profiles,
    prefillSpeeds: settings.prefillSpeeds,
    seed: settings.seed,
    stepJitterCv: settings.stepJitterCv,
    stepJitterStream: settings.stepJitterStream,
    ...(settings.flowControl !== undefined ? { flowControl: settings.flowControl } : {}),
    ...(settings.kvEvents !== undefined ? { kvEvents: settings.kvEvents } : {}),
    ...(settings.engineRestart !== undefined ? { engineRestart: settings.engineRestart } : {}),
    ...(settings.bypassShare !== undefined ? { bypassShare: settings.bypassShare } : {}),
    load: settings.load,
    maxRequests: settings.maxRequests,
    warmupMs: settings.warmupMs,
    sendUntilMs: settings.sendUntilMs,
    ceilings: tracker,
    promptWorker: settings.promptWorker,
    onProgress,
    // Virtual seconds between progress reports: frequent enough for a smooth bar, a callback is all it costs.
    progressEveryMs: 5_000,
  });
  return { result, ceilings: tracker.result() };
}

/** The report's environment rows for what the run models beyond routing (engine truth, restart, bypass). */
function scenarioEnvironment(config: StrategyComparisonConfig): Record<string, string> {
  const { kvEvents: kv, engineRestart: restart, bypassShare } = config;
  return {
    ...(kv === undefined
      ? {}
      : { "engines' KV events followed (delay, loss per batch)": `${kv.delayMs} ms, ${kv.lossRate * 100} %` }),
    ...(restart === undefined
      ? {}
      : {
          'engine restart (instance, at, down)': `instance-${restart.instance}, ${restart.atMs / 1000} s, ${restart.downMs / 1000} s`,
        }),
    ...(bypassShare ? { 'requests around the routers (not reported)': `${bypassShare * 100} %` } : {}),
  };
}

/** What each run's engine events and bypassing traffic amounted to, one line per strategy that had any. */
function scenarioNotes(results: readonly SimulationResult[], labels: readonly string[]): string[] {
  return results.flatMap((r, i) => {
    const parts = [
      ...(r.kvEvents === undefined
        ? []
        : [
            `KV event batches: ${r.kvEvents.published} published, ${r.kvEvents.lost} lost (over all router replicas), ${r.kvEvents.replayed} replayed, ${r.kvEvents.staleMarks} times an engine went stale for a router`,
          ]),
      ...(r.bypassed === undefined ? [] : [`${r.bypassed} requests went around the routers (not in the figures)`]),
    ];
    return parts.length === 0 ? [] : [`${labels[i]}: ${parts.join('; ')}.`];
  });
}

/** Checks the policies can be compared; returns their labels. */
export function comparisonLabels(policies: readonly PolicyConfig[]): string[] {
  if (policies.length === 0) throw new RangeError('policies must name at least one policy');
  const labels = policyLabels(policies);
  if (new Set(labels).size !== labels.length) throw new RangeError(`policies must differ (got ${labels.join(', ')})`);
  return labels;
}

export function compareStrategies(config: StrategyComparisonConfig): StrategyComparison {
  comparisonLabels(config.policies);
  const outcomes = config.policies.map((policy, index) => {
    config.onStrategyStart?.(policy, index);
    const outcome = simulateStrategy(
      config.workload,
      policy,
      config,
      config.onProgress ? (p) => config.onProgress!(policy, p) : undefined,
    );
    config.onStrategyDone?.(policy, outcome.result);
    return outcome;
  });
  return assembleComparison(config, outcomes);
}

/** The report of strategies simulated one by one or in parallel: the same outcomes give the same report. */
export function assembleComparison(
  config: StrategyComparisonConfig,
  outcomes: readonly StrategyOutcome[],
): StrategyComparison {
  const labels = comparisonLabels(config.policies);
  const results = outcomes.map((o) => o.result);
  const runs: StrategyRunInput[] = outcomes.map((o, index) => ({
    ...toStrategyRun(o.result, labels[index]),
    records: withClientLatency(o.result.records, config.clientLatency, config.seed ?? 1),
    ceilings: o.ceilings,
  }));
  const notes = [...(config.notes ?? []), ...scenarioNotes(results, labels)];
  const fleet = outcomes.map((o) => o.ceilings.fleetHitRate ?? 0);
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
      ...(config.routers !== undefined && config.routers > 1
        ? { 'router replicas (round-robin, no shared state)': config.routers }
        : {}),
      ...(config.observeIntervalMs
        ? { "instances' published state observed every (ms)": config.observeIntervalMs }
        : {}),
      ...(config.profiles !== undefined && new Set(config.profiles.map((p) => p.name)).size > 1
        ? {
            fleet: fleetText(config.profiles),
            'KV capacity per instance (tokens)': fleetGroups(config.profiles)
              .map((g) => `${g.count} × ${g.profile.kvCapacityBlocks * g.profile.blockTokens}`)
              .join(' + '),
            "routers' knowledge of prefill speeds": config.prefillSpeeds ?? 'profile',
          }
        : {
            profile: config.profile.name,
            'KV capacity per instance (tokens)': config.profile.kvCapacityBlocks * config.profile.blockTokens,
          }),
      'max batched tokens per step': config.profile.maxNumBatchedTokens,
      'max sequences': config.profile.maxNumSeqs,
      ...(config.profile.longPrefillTokenThreshold
        ? { 'long prefill token threshold': config.profile.longPrefillTokenThreshold }
        : {}),
      ...(config.profile.schedulingPolicy !== undefined
        ? { 'scheduling policy': config.profile.schedulingPolicy }
        : {}),
      ...(config.flowControl?.mode === 'off' ? { 'flow control': 'off' } : {}),
      ...scenarioEnvironment(config),
      seed: config.seed ?? 1,
      ...(config.stepJitterCv ? { 'step-time jitter (CV)': config.stepJitterCv } : {}),
      ...(config.clientLatency?.routerOverheadMs
        ? {
            'router overhead (ms)': `${config.clientLatency.routerOverheadMs.min}–${config.clientLatency.routerOverheadMs.max}`,
          }
        : {}),
      ...(config.clientLatency?.networkRttMs
        ? {
            'network round trip (ms)': `${config.clientLatency.networkRttMs.min}–${config.clientLatency.networkRttMs.max}`,
          }
        : {}),
      'warm-up (s)': (config.warmupMs ?? 0) / 1000,
      ...(config.sendUntilMs !== undefined ? { 'send window (s)': config.sendUntilMs / 1000 } : {}),
      'simulation wall time (s)': Math.round(wallSeconds * 10) / 10,
    },
    baseline: config.baseline,
    ceilings: outcomes[0].ceilings,
    runs,
    notes,
  });
  return { report, results };
}
