import { policyDefinition, type PolicyConfig } from '../policy';
import { expandPolicySweep, formatPolicySpec, parsePolicySpec } from '../policy/policy-spec';
import { policyLabels } from '../sim/compare-strategies';
import { contentChars, type Workload } from '../workload';
import { runSearches, sizeSearch, type NonMonotonePoint, type SearchTask, type SizeVerdict } from './size-search';
import { HOURS_PER_MONTH } from '../common/instance-prices';
import { SAGEMAKER_ROUTING_OF } from '../common/sagemaker-routing';
import { liveEngineStateRefusal } from '../config/router-config';
import type { EngineArgs } from '../emulator/engine-args';
import { engineGridPoint, ENGINE_GRID_FLAGS, type EngineGridPoint } from './engine-grid';
import { searchEngineGrid } from './engine-search';
import { bestOf, bestPreferringProfileEngine, RunCache, type RunCacheConfig, type SizedRun } from './run-cache';

export type { SizedRun };

/** Hours in the month `plan` bills (common/instance-prices.ts). */
export { HOURS_PER_MONTH };

/** The strategies SageMaker runs itself (common/sagemaker-routing.ts). */
export { SAGEMAKER_ROUTING_OF };

/**
 * PREFIX_AWARE routes a request among instances, so it needs two (the construct refuses one unless told
 * otherwise): its searches start there.
 */
export const PREFIX_AWARE_MIN_INSTANCES = 2;

/**
 * The default PREFIX_AWARE sweep: the construct's defaults (prefixLength 8192, concurrencyThreshold 32) and a
 * factor of four either side, all within the API's ranges (1024–65536, 1–1024). AWS's sample notebook's
 * threshold of 10 lies inside the band.
 */
export const DEFAULT_PREFIX_AWARE_SWEEP =
  'sagemaker-prefix-aware?prefixLength=2048,8192,32768&concurrencyThreshold=8,32,128';

/** Strategies a plan compares when given none: SageMaker's three (PREFIX_AWARE over its sweep) and ours. */
export const DEFAULT_PLAN_POLICIES: readonly string[] = ['random', 'least-outstanding-requests', 'cache-aware'];
export const DEFAULT_PLAN_SWEEPS: readonly string[] = [DEFAULT_PREFIX_AWARE_SWEEP];

/** serve's refusal of a policy that reads what only the simulator's engine models know (oracle); null when serve runs it. */
function simulatorOnlyReason(policy: string): string | null {
  return liveEngineStateRefusal(policy, policyDefinition(policy)?.engineState) ?? null;
}

/** A strategy of the plan: one policy, or the settings of one sweep (the plan picks the best setting at each size). */
export interface PlanStrategy {
  readonly label: string;
  /** The sweep spec the settings came from, for a sweep. */
  readonly sweep?: string;
  readonly configs: readonly PolicyConfig[];
}

/** The plan's strategies from `--policy` and `--sweep` specs (the defaults when both are empty): policies first, then sweeps. */
export function planStrategies(policySpecs: readonly string[], sweepSpecs: readonly string[]): PlanStrategy[] {
  const fromDefaults = policySpecs.length === 0 && sweepSpecs.length === 0;
  const policies = fromDefaults ? DEFAULT_PLAN_POLICIES : policySpecs;
  const sweeps = fromDefaults ? DEFAULT_PLAN_SWEEPS : sweepSpecs;
  const singles = policies.map((spec) => parsePolicySpec(spec));
  const labels = policyLabels(singles);
  const strategies: PlanStrategy[] = [
    ...singles.map((config, i) => ({ label: labels[i], configs: [config] })),
    ...sweeps.map((spec) => {
      const configs = expandPolicySweep(spec);
      return { label: `${configs[0].name} (best of ${configs.length} settings)`, sweep: spec, configs };
    }),
  ];
  const all = strategies.flatMap((s) => s.configs.map(formatPolicySpec));
  const repeated = all.find((s, i) => all.indexOf(s) !== i);
  if (repeated !== undefined) throw new RangeError(`--policy and --sweep name ${repeated} twice`);
  return strategies;
}

export interface PlanConfig extends Omit<RunCacheConfig, 'baseEngine'> {
  readonly strategies: readonly PlanStrategy[];
  readonly instances: { readonly min: number; readonly max: number };
  /**
   * The engine settings searched (engine-grid.ts), base point first: the profile as given, which the size search
   * runs. A grid of the base point alone searches nothing.
   */
  readonly engineGrid: readonly EngineGridPoint[];
  /** Most simulations the whole plan may run (autoscaling windows included). */
  readonly maxRuns: number;
  /** Measure every size instead of searching (see sizeSearch). */
  readonly exhaustive?: boolean;
  /** Length of the busiest and quietest windows (ms) the autoscaling bounds are sized on; 0 skips them. */
  readonly windowMs: number;
}

export interface StrategyPlan {
  readonly label: string;
  /** The sweep spec of a sweep's settings; null for one policy. */
  readonly sweep: string | null;
  readonly sagemakerRouting: 'RANDOM' | 'LEAST_OUTSTANDING_REQUESTS' | 'PREFIX_AWARE' | null;
  /** Why `serve` refuses this strategy's policy (it reads engine state only the simulator has); null when it runs it. */
  readonly simulatorOnly: string | null;
  /** Fewest instances in range meeting every SLO; null when unreachable (or the run budget ran out). */
  readonly minInstances: number | null;
  readonly outOfBudget: boolean;
  /** The run at `minInstances` (the best setting there, for a sweep); else the best run at the largest size measured. */
  readonly atMin: SizedRun | null;
  readonly bestAtLargest: SizedRun | null;
  /** Every size measured with the best setting at each (the chart's points). */
  readonly curve: readonly SizedRun[];
  readonly nonMonotone: readonly NonMonotonePoint[];
  readonly searchedFrom: number;
  /** Fewest instances with the profile's engine settings (the size search's answer), beside `minInstances`. */
  readonly baseEngineMinInstances: number | null;
  /** What each searched engine argument of `atMin` bought there (one entry per argument off the profile's value). */
  readonly engineEffects: readonly EngineEffect[];
}

/** One engine argument the plan chose off the profile's value, and the same run with the profile's value. */
export interface EngineEffect {
  readonly flag: string;
  readonly value: number | string;
  readonly profileValue: number | string;
  /** The run at the same size and routing setting with only this argument at the profile's value (null: not measured). */
  readonly without: SizedRun | null;
}

export interface WindowPlan {
  readonly which: 'busiest' | 'quietest';
  readonly fromMs: number;
  readonly untilMs: number;
  readonly requests: number;
  readonly promptChars: number;
  readonly minInstances: number | null;
  readonly nonMonotone: readonly NonMonotonePoint[];
}

export interface AutoscalingPlan {
  readonly strategy: string;
  readonly policy: string;
  /** The engine settings the windows ran with: the strategy's at its answer. */
  readonly engineArgs: EngineArgs;
  readonly windowSeconds: number;
  readonly windows: readonly WindowPlan[];
  /** Suggested bounds, or null with the reason in `note`. */
  readonly minCapacity: number | null;
  readonly maxCapacity: number | null;
  readonly note: string;
}

export interface PlanResult {
  readonly strategies: readonly StrategyPlan[];
  readonly autoscaling: AutoscalingPlan | null;
  readonly runs: number;
  readonly wallMs: number;
}

/**
 * Runs the plan: every strategy's size search with the profile's engine, the engine grid below each answer
 * (engine-search.ts), then the autoscaling windows of the cheapest SageMaker strategy.
 */
export async function runPlan(config: PlanConfig): Promise<PlanResult> {
  const started = Date.now();
  const cache = new RunCache({ ...config, baseEngine: config.engineGrid[0] });
  const floorOf = (strategy: PlanStrategy) =>
    Math.min(searchFloor(strategy, config.instances.min), config.instances.max);
  const tasks: SearchTask<number>[] = config.strategies.map((strategy, i) => ({
    key: i,
    search: sizeSearch(floorOf(strategy), config.instances.max, config.exhaustive),
    runsPerSize: strategy.configs.length,
  }));
  const outcomes = await runSearches(tasks, (probes) => measureSizes(config, cache, probes), config.maxRuns);
  // A size that met the SLOs may have been settled by one setting: the answer's size gets every setting, so
  // the plan names the best one there.
  await cache.measure(
    outcomes.flatMap((o, i) =>
      o.result?.minInstances == null
        ? []
        : config.strategies[i].configs.map((policy) => ({ policy, instances: o.result!.minInstances! })),
    ),
  );
  const baseAnswers = outcomes.map((o) => o.result?.minInstances ?? null);
  const engineResults = await searchEngineGrid(
    config.strategies.map((strategy, i) => ({
      policy: bestSettingAt(strategy, cache, baseAnswers[i] ?? config.instances.max),
      minInstances: baseAnswers[i],
      floor: floorOf(strategy),
      max: config.instances.max,
    })),
    config.engineGrid,
    cache,
    config.maxRuns,
  );
  const strategies = outcomes.map((outcome, i): StrategyPlan => {
    const strategy = config.strategies[i];
    const curve = cache
      .sizesOf(strategy.configs)
      .map((n) => bestPreferringProfileEngine(cache.runsAt(strategy.configs, n)));
    const min = engineResults[i].minInstances;
    const atMin = min === null ? null : curve.find((r) => r.instances === min)!;
    return {
      label: strategy.label,
      sweep: strategy.sweep ?? null,
      sagemakerRouting: SAGEMAKER_ROUTING_OF[strategy.configs[0].name] ?? null,
      simulatorOnly: simulatorOnlyReason(strategy.configs[0].name),
      minInstances: min,
      // The size search's budget: a grid cut short by it still leaves that search's answer.
      outOfBudget: outcome.outOfBudget,
      atMin,
      bestAtLargest: curve.length > 0 ? curve[curve.length - 1] : null,
      curve,
      nonMonotone: outcome.result?.nonMonotone ?? [],
      searchedFrom: floorOf(strategy),
      baseEngineMinInstances: baseAnswers[i],
      engineEffects: atMin === null ? [] : engineEffects(config, cache, atMin),
    };
  });
  const autoscaling = config.windowMs > 0 ? await planAutoscaling(config, strategies, cache) : null;
  return { strategies, autoscaling, runs: cache.runs, wallMs: Date.now() - started };
}

/** The setting with the most room under the SLOs at `instances` with the profile's engine (a sweep's best there). */
function bestSettingAt(strategy: PlanStrategy, cache: RunCache, instances: number): PolicyConfig {
  const runs = cache.runsAt(strategy.configs, instances).filter((r) => r.baseEngine);
  if (runs.length === 0) return strategy.configs[0];
  const best = bestOf(runs).policy;
  return strategy.configs.find((c) => formatPolicySpec(c) === best)!;
}

/** For each searched argument `run` holds off the profile's value: the same run with only that argument put back. */
function engineEffects(config: PlanConfig, cache: RunCache, run: SizedRun): EngineEffect[] {
  const base = config.engineGrid[0].args;
  return ENGINE_GRID_FLAGS.filter((flag) => run.engineArgs[flag] !== base[flag]).map((flag) => {
    const engine = engineGridPoint(config.engineGrid, { ...run.engineArgs, [flag]: base[flag] });
    const policy = parsePolicySpec(run.policy);
    return {
      flag,
      value: run.engineArgs[flag],
      profileValue: base[flag],
      without: engine === undefined ? null : (cache.get({ policy, instances: run.instances, engine }) ?? null),
    };
  });
}

/** The cheapest strategy SageMaker can run itself (ties: the one with more room under the SLOs). */
export function recommendedSageMakerStrategy(strategies: readonly StrategyPlan[]): StrategyPlan | undefined {
  const candidates = strategies.filter((s) => s.sagemakerRouting !== null && s.minInstances !== null);
  candidates.sort((a, b) => a.minInstances! - b.minInstances! || a.atMin!.margin - b.atMin!.margin);
  return candidates[0];
}

function searchFloor(strategy: PlanStrategy, min: number): number {
  return strategy.configs[0].name === 'sagemaker-prefix-aware' ? Math.max(min, PREFIX_AWARE_MIN_INSTANCES) : min;
}

/**
 * One round of sizes, one per strategy. A size meets the SLOs when any setting of the strategy meets them, so
 * a sweep runs first the setting that did best at the nearest size measured; only when that one misses do its
 * other settings run. The verdict is the same as running every setting; the saving is most of a sweep's runs
 * at the sizes above the answer.
 */
async function measureSizes(
  config: PlanConfig,
  cache: RunCache,
  probes: readonly { readonly key: number; readonly instances: number }[],
): Promise<SizeVerdict[]> {
  const configsOf = (key: number) => config.strategies[key].configs;
  const first = probes.map((p) => ({ policy: cache.promising(configsOf(p.key), p.instances), instances: p.instances }));
  const firstRuns = await cache.measure(first);
  const rest = probes.flatMap((p, i) =>
    firstRuns[i].margin <= 1
      ? []
      : configsOf(p.key)
          .filter((c) => c !== first[i].policy)
          .map((policy) => ({ policy, instances: p.instances })),
  );
  await cache.measure(rest);
  return probes.map((p) => {
    const best = bestOf(
      configsOf(p.key)
        .map((c) => cache.get({ policy: c, instances: p.instances }))
        .filter((r): r is SizedRun => r !== undefined),
    );
    return { meets: best.margin <= 1, margin: best.margin };
  });
}

/** Requests and prompt characters arriving in each window of `windowMs`, from the workload's arrival times. */
export interface WindowLoad {
  readonly fromMs: number;
  readonly untilMs: number;
  readonly requests: number;
  readonly promptChars: number;
}

export function windowLoads(workload: Workload, windowMs: number, sendUntilMs = Infinity): WindowLoad[] {
  const windows: WindowLoad[] = [];
  for (const request of workload.requests()) {
    if (request.arrivalMs >= sendUntilMs) break;
    const at = Math.floor(request.arrivalMs / windowMs);
    while (windows.length <= at)
      windows.push({
        fromMs: windows.length * windowMs,
        untilMs: (windows.length + 1) * windowMs,
        requests: 0,
        promptChars: 0,
      });
    const w = windows[at];
    windows[at] = { ...w, requests: w.requests + 1, promptChars: w.promptChars + contentChars(request) };
  }
  return windows;
}

/** The windows with the most and the fewest prompt characters (the first of equals). */
function busiestAndQuietest(
  loads: readonly WindowLoad[],
): readonly { readonly which: 'busiest' | 'quietest'; readonly load: WindowLoad }[] {
  const busiest = loads.reduce((b, w) => (w.promptChars > b.promptChars ? w : b));
  const quietest = loads.reduce((q, w) => (w.promptChars < q.promptChars ? w : q));
  return [
    { which: 'busiest', load: busiest },
    { which: 'quietest', load: quietest },
  ];
}

/**
 * Busiest and quietest windows by prompt characters (prefill work, what decides TTFT), each replayed twice
 * and measured on the second pass (see ArrivalWindow.warmUpWithItself): the size a window needs in steady
 * state, with its own prefixes cached, is what autoscaling should settle at while that load lasts.
 */
async function planAutoscaling(
  config: PlanConfig,
  strategies: readonly StrategyPlan[],
  cache: RunCache,
): Promise<AutoscalingPlan | null> {
  const chosen = recommendedSageMakerStrategy(strategies);
  const windowSeconds = config.windowMs / 1000;
  if (chosen === undefined) return null;
  const policy = parsePolicySpec(chosen.atMin!.policy);
  const engine = engineGridPoint(config.engineGrid, chosen.atMin!.engineArgs);
  const { policy: spec, engineArgs } = chosen.atMin!;
  const base = { strategy: chosen.label, policy: spec, engineArgs, windowSeconds };
  const unsized = (note: string): AutoscalingPlan => ({
    ...base,
    windows: [],
    minCapacity: null,
    maxCapacity: null,
    note,
  });
  if (config.workload.load.mode === 'closed')
    return unsized(
      'A closed-loop workload has no arrival times, so it has no busy or quiet windows: size autoscaling on an open-loop workload.',
    );
  const loads = windowLoads(config.workload, config.windowMs, config.sendUntilMs);
  // The last window is usually cut short by the end of the workload: it is not a candidate.
  const full = loads.slice(0, -1);
  if (full.length < 2)
    return unsized(
      `The workload spans fewer than three ${windowSeconds}-s windows: too few to tell busy from quiet (use a shorter --window or a longer workload).`,
    );
  const picked = busiestAndQuietest(full);
  const lo = Math.min(searchFloor({ label: '', configs: [policy] }, config.instances.min), config.instances.max);
  const windowOf = (load: WindowLoad) => ({
    window: { fromMs: load.fromMs, untilMs: load.untilMs, warmUpWithItself: true },
    warmupMs: config.windowMs,
  });
  const outcomes = await runSearches(
    picked.map((_, i) => ({ key: i, search: sizeSearch(lo, config.instances.max, config.exhaustive), runsPerSize: 1 })),
    async (probes) => {
      const runs = await cache.measure(
        probes.map((p) => ({ policy, engine, instances: p.instances, ...windowOf(picked[p.key].load) })),
      );
      return runs.map((r) => ({ meets: r.margin <= 1, margin: r.margin }));
    },
    Math.max(0, config.maxRuns - cache.runs),
  );
  const windows: WindowPlan[] = picked.map((p, i) => ({
    which: p.which,
    fromMs: p.load.fromMs,
    untilMs: p.load.untilMs,
    requests: p.load.requests,
    promptChars: p.load.promptChars,
    minInstances: outcomes[i].result?.minInstances ?? null,
    nonMonotone: outcomes[i].result?.nonMonotone ?? [],
  }));
  const [busy, quiet] = windows;
  if (busy.minInstances === null) {
    return {
      ...base,
      windows,
      minCapacity: null,
      maxCapacity: null,
      note: outcomes[0].outOfBudget
        ? 'The run budget (--max-runs) ran out before the busiest window was sized.'
        : `No size up to ${config.instances.max} meets the SLOs in the busiest window: raise --instances.`,
    };
  }
  const maxCapacity = Math.max(busy.minInstances, chosen.minInstances!);
  // A quiet window that no size meets (or that outran the budget) gives no reason to scale below the maximum.
  const minCapacity = Math.min(quiet.minInstances ?? maxCapacity, maxCapacity);
  return {
    ...base,
    windows,
    minCapacity,
    maxCapacity,
    note: `${quiet.minInstances !== null && quiet.minInstances > busy.minInstances ? `The quietest window needs more instances (${quiet.minInstances}) than the busiest (${busy.minInstances}): its latency is set by its longest prompts, not by its load, so scaling in would not save instances without missing the SLOs. ` : ''}${quiet.minInstances === null ? `No size meets the SLOs in the quietest window${outcomes[1].outOfBudget ? ' before the run budget ran out' : ''}, so minCapacity is maxCapacity. ` : ''}minCapacity meets the SLOs in the quietest ${windowSeconds}-s window and maxCapacity in the busiest (and over the whole workload); a new instance takes minutes to load its model, so a fleet scaled to the quiet level misses the SLOs until scale-out completes.`,
  };
}
