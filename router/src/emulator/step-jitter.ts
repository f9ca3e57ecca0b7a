import type { Rng } from '../common/seeded-rng';

/**
 * Step-time jitter: each engine step's modelled duration multiplied by a lognormal factor with mean 1 and the
 * given coefficient of variation, drawn from a seeded generator (one draw per step, in step order, so the
 * step-by-step and fast-forward paths of the engine model stay identical).
 *
 * Calibration (docs/benchmarks.md, "Variance sources"): vLLM's nightly latency benchmark runs a fixed batch of 8
 * requests, 32 input and 128 output tokens, and reports end-to-end latency over repeated iterations. For
 * Llama 3 70B TP4 on A100 it published mean 3,990.59 ms, median 3,990.39 ms, P99 3,991.87 ms
 * (buildkite.com/vllm/performance-benchmark, build 9523): P99 − P50 = 1.48 ms ≈ 2.33 σ of a sum of ≈129 steps,
 * so σ_step ≈ 0.64 ms / √129 ≈ 0.056 ms on a mean step of ≈31 ms: a coefficient of variation of ≈0.2 % per step
 * (independent steps; correlated jitter would give an even smaller per-step value).
 */
export const MEASURED_STEP_JITTER_CV = 0.002;
export const STEP_JITTER_CV_RANGE = { min: 0, max: 1 } as const;

export class StepJitter {
  private readonly sigma: number;
  private spare: number | undefined;
  /** Normals to draw again, the next one last (see `unread`). */
  private readonly replay: number[] = [];
  /** Normals drawn since `journal()`, in order; undefined when not journaling. */
  private journaled: number[] | undefined;

  constructor(
    readonly cv: number,
    private readonly rng: Rng,
  ) {
    if (!(cv >= STEP_JITTER_CV_RANGE.min && cv <= STEP_JITTER_CV_RANGE.max)) {
      throw new RangeError(
        `step jitter cv must be between ${STEP_JITTER_CV_RANGE.min} and ${STEP_JITTER_CV_RANGE.max} (got ${cv})`,
      );
    }
    this.sigma = Math.sqrt(Math.log(1 + cv * cv));
  }

  /** The next step's duration. */
  apply(durationMs: number): number {
    if (this.sigma === 0) return durationMs;
    return durationMs * Math.exp(this.sigma * this.normal() - (this.sigma * this.sigma) / 2);
  }

  /**
   * Starts recording the draws, so that `unread` can give back those of steps computed ahead but never taken
   * (engine-model.ts: a decode stretch cut short by a new request). Replaces a journal already open.
   */
  journal(): void {
    this.journaled = [];
  }

  /** Gives back the last `count` draws since `journal()`, to be drawn again in the same order; closes the journal. */
  unread(count: number): void {
    const drawn = this.journaled;
    this.journaled = undefined;
    if (count === 0 || this.sigma === 0) return;
    if (drawn === undefined || !(count <= drawn.length))
      throw new RangeError(`cannot unread ${count} draws: ${drawn?.length ?? 0} journaled`);
    for (let i = drawn.length - 1; i >= drawn.length - count; i--) this.replay.push(drawn[i]);
  }

  /** Standard normal (Box–Muller, both values used). */
  private normal(): number {
    const z = this.replay.length > 0 ? this.replay.pop()! : this.generate();
    this.journaled?.push(z);
    return z;
  }

  private generate(): number {
    if (this.spare !== undefined) {
      const z = this.spare;
      this.spare = undefined;
      return z;
    }
    const u = 1 - this.rng.next();
    const v = this.rng.next();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  }
}
