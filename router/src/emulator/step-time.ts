import type { StepTimeCoefficients } from './engine-profile';

/**
 * How long one engine step takes, from what it schedules:
 *
 *   base + max(decodeFloor + decodeNs·Σ decode context,  us·scheduled tokens + attentionNs·Σ new·(cached + new/2))
 *
 * A step is bound either by memory bandwidth (weights once, plus the KV of every decoding sequence) or by
 * compute (dense layers per token, plus attention of each new token over the tokens before it). Coefficients
 * come from the profile; units are converted once here so the engine's two paths (step by step and fast
 * forward) evaluate exactly the same arithmetic and get bit-identical times.
 *
 * A cached prefix costs only through attention (its tokens are `cached` in the pairs). Held against prefill
 * times measured on an H200 (docs/emulator.md, "Prefill measured on an H200"): every cached-prefix row is
 * within 20 % with no extra term. Those rows cost 4–18 % more than this predicts, but the surcharge appears on
 * new-token pairs too and most likely comes from the harness running a different attention kernel for them,
 * which vLLM does not, so there is deliberately no separate price for attending to cached keys.
 */
export class StepTimeModel {
  private readonly baseMs: number;
  private readonly decodeFloorMs: number;
  private readonly msPerContextToken: number;
  private readonly msPerScheduledToken: number;
  private readonly msPerTokenPair: number;

  constructor(coefficients: StepTimeCoefficients) {
    this.baseMs = coefficients.baseMs;
    this.decodeFloorMs = coefficients.decodeFloorMs;
    this.msPerContextToken = coefficients.decodeNsPerContextToken * 1e-6;
    this.msPerScheduledToken = coefficients.usPerScheduledToken * 1e-3;
    this.msPerTokenPair = coefficients.attentionNsPerTokenPair * 1e-6;
  }

  /**
   * @param scheduledTokens every token computed this step (prefill chunks + one per decoding sequence)
   * @param decodeContextTokens Σ over decoding sequences of their context length (tokens attended)
   * @param attentionPairs Σ over scheduled sequences of new·(cached + new/2), cached = tokens already in KV
   */
  durationMs(scheduledTokens: number, decodeContextTokens: number, attentionPairs: number): number {
    const memoryBound = this.decodeFloorMs + this.msPerContextToken * decodeContextTokens;
    const computeBound = this.msPerScheduledToken * scheduledTokens + this.msPerTokenPair * attentionPairs;
    return this.baseMs + (memoryBound > computeBound ? memoryBound : computeBound);
  }
}
