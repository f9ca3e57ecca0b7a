/**
 * The engine settings `plan` searches besides instance count and routing (issue 38): vLLM's step budget
 * (`--max-num-batched-tokens`) and its per-request prefill cap (`--long-prefill-token-threshold`), on a small grid
 * around vLLM's defaults, which the profile's values are (vLLM V1's resolved defaults on that GPU).
 *
 * - `max-num-batched-tokens`: the profile's value, half and double it (at least `max-num-seqs`, as vLLM's
 *   `verify_max_model_len` requires).
 * - `long-prefill-token-threshold`: 0 (vLLM's default: no cap) and ⌊0.04 × max-model-len⌋, the value vLLM itself
 *   gives the cap when it turns it on (`SchedulerConfig.__post_init__` with `max_num_partial_prefills > 1`,
 *   vllm/config/scheduler.py, commit 1f8758d5), and the profile's own when it sets one.
 *
 * An argument given with `--engine-arg` is held at that value, not searched.
 */
import type { EngineProfile } from '../emulator/engine-profile';
import { applyEngineArgs, engineArgsText, integerArgRange, type EngineArgs } from '../emulator/engine-args';

/** The engine arguments `plan` searches, by vLLM flag name. */
export const ENGINE_GRID_FLAGS = ['max-num-batched-tokens', 'long-prefill-token-threshold'] as const;

/** The share of max-model-len vLLM gives long_prefill_token_threshold when it sets the cap itself. */
export const VLLM_LONG_PREFILL_SHARE = 0.04;

/** One point of the grid: the searched arguments' values and the profile that runs them. */
export interface EngineGridPoint {
  /** Every searched argument's value at this point (the profile's own at the base point). */
  readonly args: EngineArgs;
  /** `NAME=VALUE&…` of `args`: the point's name in reports and the plan's run cache. */
  readonly key: string;
  readonly profile: EngineProfile;
  /** The profile as given (after `--engine-arg`): what the size search runs. */
  readonly base: boolean;
}

/** The grid of the profile alone (`plan --engine-search off`): nothing is searched. */
export function baseGridPoint(profile: EngineProfile): EngineGridPoint {
  const args: EngineArgs = {
    'max-num-batched-tokens': profile.maxNumBatchedTokens,
    'long-prefill-token-threshold': profile.longPrefillTokenThreshold ?? 0,
  };
  return { args, key: engineArgsText(args).join('&'), profile, base: true };
}

/**
 * The grid for `profile` (already carrying `--engine-arg`), base point first. Points that cannot differ are
 * simulated once: a threshold at or above the step budget caps nothing (no request gets more than the budget in
 * a step), so it is the same engine as threshold 0 with that budget, and only the first of equals is kept.
 */
export function engineGrid(profile: EngineProfile, held: EngineArgs): EngineGridPoint[] {
  const budgetRange = integerArgRange('maxNumBatchedTokens');
  const budget = profile.maxNumBatchedTokens;
  const threshold = profile.longPrefillTokenThreshold ?? 0;
  const budgets =
    'max-num-batched-tokens' in held
      ? [budget]
      : [budget, Math.floor(budget / 2), budget * 2].filter(
          (b) => b >= Math.max(profile.maxNumSeqs, budgetRange.min) && b <= budgetRange.max,
        );
  const thresholds =
    'long-prefill-token-threshold' in held
      ? [threshold]
      : [threshold, 0, Math.floor(profile.maxModelLen * VLLM_LONG_PREFILL_SHARE)].filter(
          (t) => t <= profile.maxModelLen,
        );
  const points: EngineGridPoint[] = [];
  const engines = new Set<string>();
  for (const b of budgets) {
    for (const t of thresholds) {
      const args: EngineArgs = { 'max-num-batched-tokens': b, 'long-prefill-token-threshold': t };
      const engine = engineOf(args);
      if (engines.has(engine)) continue;
      engines.add(engine);
      points.push(
        points.length === 0
          ? baseGridPoint(profile)
          : { args, key: engineArgsText(args).join('&'), profile: applyEngineArgs(profile, args), base: false },
      );
    }
  }
  return points;
}

/** The engine a point runs: a cap the step budget already enforces is no cap (see engineGrid). */
function engineOf(args: EngineArgs): string {
  const budget = Number(args['max-num-batched-tokens']);
  const threshold = Number(args['long-prefill-token-threshold']);
  return `${budget}|${threshold >= budget ? 0 : threshold}`;
}

/** The grid point that runs the same engine as `args` (the one kept of equals); undefined when the grid has none. */
export function engineGridPoint(grid: readonly EngineGridPoint[], args: EngineArgs): EngineGridPoint | undefined {
  const engine = engineOf(args);
  return grid.find((p) => engineOf(p.args) === engine);
}
