import type { KvLoadCandidate, KvLoadFacts } from './kv-load-candidates';
import type { Scorer } from './stage';

/** NVIDIA Dynamo KV router's cost terms (its "Routing Concepts" page). */
export interface DynamoCostOptions {
  /** Share of a worker's overlap blocks credited against its prefill (kv-overlap-score-credit, 0–1). */
  readonly overlapScoreCredit: number;
  /** Scale of the adjusted prefill blocks (prefill-load-scale). */
  readonly prefillLoadScale: number;
}

/**
 * Minus Dynamo's cost, lower cost scoring higher: prefill_load_scale × max(active prefill blocks + the request's
 * prompt blocks − credit × overlap blocks, 0) + active decode blocks + the request's blocks.
 */
export function dynamoCostScorer(options: DynamoCostOptions): Scorer<KvLoadCandidate, KvLoadFacts> {
  return {
    kind: 'scorer',
    name: 'dynamo-kv-cost',
    weight: 1,
    score(candidates, facts, scores) {
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[i];
        const rawPrefill = c.activePrefillBlocks + facts.promptBlocks;
        const adjustedPrefill = Math.max(rawPrefill - options.overlapScoreCredit * c.overlapBlocks, 0);
        const decode = c.activeDecodeBlocks + facts.promptBlocks;
        scores[i] = -(options.prefillLoadScale * adjustedPrefill + decode);
      }
    },
  };
}
