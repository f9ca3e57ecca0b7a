/**
 * How fast each instance prefills, learned from the times to first token the router observes: what lets a
 * cost-based policy predict TTFT on a fleet that mixes instance types (SageMaker `InstancePools` fills a fleet
 * with fallback types when p5 capacity is short).
 *
 * **Sample.** A request's TTFT covers the prefill queued on its instance when it was sent plus its own uncached
 * prompt (an engine serves queued prefill first come, first served, chunk by chunk), so one observation gives
 * `ttftMs / (queued + own prefill tokens)`: milliseconds per prefill token on that instance, at that moment. The
 * fixed part of a TTFT (HTTP, tokenization, one step) is in it too; samples with less work than `minSampleTokens`
 * are dropped, where that part dominates. What is left of it biases every instance by the same milliseconds, which
 * pulls their estimated speeds toward each other, never apart: a mixed fleet is then treated as less mixed
 * than it is, never more.
 *
 * **Estimator.** Per instance, an exponentially weighted mean of the samples in milliseconds per token (the unit
 * TTFT adds in), starting from a prior: sample k (1, 2, …) moves the estimate by max(smoothing, 1/(priorSamples +
 * k)) of its distance, so the prior counts as `priorSamples` samples, the first samples are averaged, and later
 * ones are weighted as an EWMA that remembers about 1/smoothing samples (an instance whose speed changes, e.g.
 * replaced by another type behind the same address, is re-learned within that many requests). Pure: no clock,
 * no I/O; the caller measures the TTFT (core/routing-core.ts does, for the live router and the simulator alike).
 */
export interface PrefillSpeedOptions {
  /** Speed assumed before an instance has been observed, in prefill tokens per second. */
  readonly priorTokensPerSecond: number;
  /** Weight of the prior, in samples. */
  readonly priorSamples: number;
  /** Weight of a new sample once the prior and the first samples are outweighed (0 < smoothing ≤ 1). */
  readonly smoothing: number;
  /** Samples with fewer prefill tokens than this are ignored (their TTFT is mostly fixed overhead). */
  readonly minSampleTokens: number;
}

/**
 * Defaults: the prior is the p5-llama-3.1-70b profile's full-step prefill speed (about 20,000 tokens/s;
 * emulator/engine-profile.ts `prefillTokensPerSecond`) — only the ratios between instances matter to a policy, so
 * the prior's value only sets where an unobserved instance starts; weighted as 4 samples; an EWMA over about 20
 * samples (1/0.05); samples below 2,048 tokens dropped (on a p5, 2,048 tokens prefill in ~100 ms, five times the
 * 20 ms fixed overhead).
 */
export const PREFILL_SPEED_DEFAULTS: PrefillSpeedOptions = {
  priorTokensPerSecond: 20_000,
  priorSamples: 4,
  smoothing: 0.05,
  minSampleTokens: 2048,
};

interface Estimate {
  msPerToken: number;
  samples: number;
}

export class PrefillSpeedEstimator {
  private readonly estimates = new Map<string, Estimate>();
  private readonly priorMsPerToken: number;

  constructor(readonly options: PrefillSpeedOptions = PREFILL_SPEED_DEFAULTS) {
    const { priorTokensPerSecond, priorSamples, smoothing, minSampleTokens } = options;
    if (!(priorTokensPerSecond > 0 && Number.isFinite(priorTokensPerSecond)))
      throw new RangeError(`priorTokensPerSecond must be a positive number (got ${priorTokensPerSecond})`);
    if (!(priorSamples >= 0 && Number.isFinite(priorSamples)))
      throw new RangeError(`priorSamples must be a number ≥ 0 (got ${priorSamples})`);
    if (!(smoothing > 0 && smoothing <= 1)) throw new RangeError(`smoothing must be in (0, 1] (got ${smoothing})`);
    if (!(minSampleTokens >= 1)) throw new RangeError(`minSampleTokens must be ≥ 1 (got ${minSampleTokens})`);
    this.priorMsPerToken = 1000 / priorTokensPerSecond;
  }

  /**
   * One observation on `instance`: `prefillTokens` (queued ahead + its own uncached prompt) took `ttftMs` to the
   * first token. Returns whether it was used (enough work, a finite positive time).
   */
  observe(instance: string, prefillTokens: number, ttftMs: number): boolean {
    if (!(prefillTokens >= this.options.minSampleTokens) || !(ttftMs > 0) || !Number.isFinite(ttftMs)) return false;
    let e = this.estimates.get(instance);
    if (e === undefined) {
      e = { msPerToken: this.priorMsPerToken, samples: 0 };
      this.estimates.set(instance, e);
    }
    e.samples++;
    const weight = Math.max(this.options.smoothing, 1 / (this.options.priorSamples + e.samples));
    e.msPerToken += weight * (ttftMs / prefillTokens - e.msPerToken);
    return true;
  }

  /** Estimated prefill tokens per second of `instance`; undefined until it has been observed. */
  tokensPerSecond(instance: string): number | undefined {
    const e = this.estimates.get(instance);
    return e === undefined ? undefined : 1000 / e.msPerToken;
  }

  /** Samples taken on `instance`. */
  samples(instance: string): number {
    return this.estimates.get(instance)?.samples ?? 0;
  }

  /** Forgets an instance (removed from the fleet: a new one behind the same id starts from the prior). */
  forget(instance: string): void {
    this.estimates.delete(instance);
  }
}

/**
 * What a cost-based policy multiplies an instance's predicted prefill work by: the fastest known speed among
 * `speeds` over this instance's (≥ 1; exactly 1 for every instance of a fleet of equal speeds, and for an instance
 * whose speed is unknown: it is assumed as fast as the fastest until observed, so it is tried, and so learned).
 */
export function slowdownOf(speed: number | undefined, fastest: number): number {
  return speed === undefined || !(speed > 0) || !(fastest > 0) ? 1 : fastest / speed;
}
