import type { EngineArgs } from '../emulator/engine-args';
import type { PolicyConfig } from '../policy';
import { formatPolicySpec } from '../policy/policy-spec';
import { summarizeStrategy, type StrategySummary } from '../report/report-model';
import { simulateStrategy, type StrategyOutcome, type StrategyRunSettings } from '../sim/compare-strategies';
import { simulateInParallel, type RunMessage } from '../sim/parallel-runs';
import { toStrategyRun } from '../sim/simulator';
import type { Workload } from '../workload';
import type { ArrivalWindow } from '../workload/arrival-window';
import type { EngineGridPoint } from './engine-grid';
import { sloMargin, type Slo } from './slo';

/** One simulated run's figures, as the plan reports them. */
export interface SizedRun {
  readonly instances: number;
  readonly policy: string;
  /** The engine settings it ran with (the grid's searched arguments). */
  readonly engineArgs: EngineArgs;
  /** Whether it ran the profile as given (the size search's engine). */
  readonly baseEngine: boolean;
  /** Whether the run replayed only a window of the workload (autoscaling), not all of it. */
  readonly window: boolean;
  readonly margin: number;
  readonly summary: StrategySummary;
}

/** What every simulation of a plan shares. */
export interface RunCacheConfig {
  readonly workload: Workload;
  readonly slos: readonly Slo[];
  /** The engine the size search runs (the grid's base point: the profile as given). */
  readonly baseEngine: EngineGridPoint;
  readonly seed: number;
  readonly warmupMs: number;
  readonly sendUntilMs?: number;
  readonly maxRequests?: number;
  /** Worker threads; 1 runs everything in this thread. */
  readonly jobs: number;
  readonly onRun?: (done: number, label: string) => void;
}

/** One simulation to measure: a policy setting at a size, with an engine point (the profile as given when absent). */
export interface RunRequest {
  readonly policy: PolicyConfig;
  readonly instances: number;
  readonly engine?: EngineGridPoint;
  readonly window?: ArrivalWindow;
  readonly warmupMs?: number;
}

/** The run with the most room under its SLOs (the first on a tie, so a sweep's order decides). */
export function bestOf(runs: readonly SizedRun[]): SizedRun {
  return runs.reduce((best, r) => (r.margin < best.margin ? r : best));
}

/**
 * How much more room under the SLOs another engine point must give, at the same size, to replace the profile's
 * settings (vLLM's defaults): 5 % of the worst SLO ratio. Less is within what the engine model can tell apart, and
 * not worth a setting a team must carry.
 */
export const ENGINE_CHANGE_MIN_GAIN = 0.05;

/** The best run at one size: the profile's engine unless another point meets where it misses, or has clearly more room. */
export function bestPreferringProfileEngine(runs: readonly SizedRun[]): SizedRun {
  const best = bestOf(runs);
  const profiles = runs.filter((r) => r.baseEngine);
  if (best.baseEngine || profiles.length === 0) return best;
  const profile = bestOf(profiles);
  const meetsOnlyWithGrid = profile.margin > 1 && best.margin <= 1;
  return meetsOnlyWithGrid || best.margin < profile.margin * (1 - ENGINE_CHANGE_MIN_GAIN) ? best : profile;
}

/** Simulations by (policy, engine, size, window), each run once however many searches ask for it. */
export class RunCache {
  private readonly runsByKey = new Map<string, SizedRun>();
  runs = 0;

  constructor(private readonly config: RunCacheConfig) {}

  get(request: RunRequest): SizedRun | undefined {
    return this.runsByKey.get(this.key(request));
  }

  /** Whole-workload runs of any of `configs` (any engine) at `instances`. */
  runsAt(configs: readonly PolicyConfig[], instances: number): SizedRun[] {
    const specs = new Set(configs.map(formatPolicySpec));
    return [...this.runsByKey.values()].filter((r) => !r.window && r.instances === instances && specs.has(r.policy));
  }

  /** The setting with the most room under the SLOs at the measured size nearest `instances` (the first when none is measured). */
  promising(configs: readonly PolicyConfig[], instances: number): PolicyConfig {
    if (configs.length === 1) return configs[0];
    let best: { config: PolicyConfig; distance: number; margin: number } | undefined;
    for (const config of configs) {
      const spec = formatPolicySpec(config);
      for (const run of this.runsByKey.values()) {
        if (run.policy !== spec || run.window || !run.baseEngine) continue;
        const distance = Math.abs(run.instances - instances);
        if (best === undefined || distance < best.distance || (distance === best.distance && run.margin < best.margin))
          best = { config, distance, margin: run.margin };
      }
    }
    return best?.config ?? configs[0];
  }

  sizesOf(configs: readonly PolicyConfig[]): number[] {
    const sizes = new Set<number>();
    for (const run of this.runsByKey.values())
      if (!run.window && configs.some((c) => formatPolicySpec(c) === run.policy)) sizes.add(run.instances);
    return [...sizes].sort((a, b) => a - b);
  }

  /** Runs what is not cached yet (in parallel on the worker threads), then answers every request from the cache. */
  async measure(requests: readonly RunRequest[]): Promise<SizedRun[]> {
    const keys = requests.map((r) => this.key(r));
    const missing = requests.filter((_, i) => !this.runsByKey.has(keys[i]) && keys.indexOf(keys[i]) === i);
    const tasks: RunMessage[] = missing.map((r) => ({
      workloadSpec: this.config.workload.spec,
      policy: r.policy,
      settings: this.settings(r),
    }));
    const outcomes: StrategyOutcome[] =
      this.config.jobs > 1 && tasks.length > 1
        ? await simulateInParallel(tasks, this.config.jobs, {
            done: (i) => this.ran(formatPolicySpec(tasks[i].policy)),
          })
        : tasks.map((t) => {
            const outcome = simulateStrategy(this.config.workload, t.policy, t.settings);
            this.ran(formatPolicySpec(t.policy));
            return outcome;
          });
    missing.forEach((r, i) => {
      const outcome = outcomes[i];
      const summary = summarizeStrategy(
        { ...toStrategyRun(outcome.result), ceilings: outcome.ceilings },
        outcome.ceilings,
        2,
      );
      this.runsByKey.set(this.key(r), {
        instances: r.instances,
        policy: formatPolicySpec(r.policy),
        engineArgs: (r.engine ?? this.config.baseEngine).args,
        baseEngine: (r.engine ?? this.config.baseEngine).base,
        window: r.window !== undefined,
        margin: sloMargin(this.config.slos, summary),
        summary,
      });
    });
    return keys.map((k) => this.runsByKey.get(k)!);
  }

  private ran(policy: string): void {
    this.runs++;
    this.config.onRun?.(this.runs, policy);
  }

  private settings(r: RunRequest): StrategyRunSettings {
    const c = this.config;
    const whole = r.window === undefined;
    return {
      instances: r.instances,
      profile: (r.engine ?? c.baseEngine).profile,
      seed: c.seed,
      maxRequests: whole ? c.maxRequests : undefined,
      warmupMs: whole ? c.warmupMs : (r.warmupMs ?? 0),
      sendUntilMs: whole ? c.sendUntilMs : undefined,
      ...(whole ? {} : { arrivalWindow: r.window }),
    };
  }

  private key(r: RunRequest): string {
    const engine = r.engine === undefined || r.engine.base ? '' : r.engine.key;
    const window = r.window === undefined ? '' : `${r.window.fromMs}-${r.window.untilMs}-${r.warmupMs ?? 0}`;
    return `${formatPolicySpec(r.policy)}|${engine}|${r.instances}|${window}`;
  }
}
