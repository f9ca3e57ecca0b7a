import type { KvLoadCandidate, KvLoadFacts } from './kv-load-candidates';
import type { Scorer } from './stage';

/**
 * llm-d's (Gateway API Inference Extension's) prefix-cache scorer in approximate mode: the share of the prompt's
 * blocks, up to `maxBlocksToMatch`, the router-side index says the pod holds (0–1).
 */
export function prefixMatchScorer(weight: number, maxBlocksToMatch: number): Scorer<KvLoadCandidate, KvLoadFacts> {
  return {
    kind: 'scorer',
    name: 'prefix-cache',
    weight,
    score(candidates, facts, scores) {
      const blocks = Math.min(facts.promptBlocks, maxBlocksToMatch);
      for (let i = 0; i < candidates.length; i++)
        scores[i] = blocks === 0 ? 0 : Math.min(candidates[i].overlapBlocks, blocks) / blocks;
    },
  };
}
