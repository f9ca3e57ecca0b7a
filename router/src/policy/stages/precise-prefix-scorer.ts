import type { KvLoadCandidate, KvLoadFacts } from './kv-load-candidates';
import type { Scorer } from './stage';

/**
 * llm-d's precise prefix-cache scorer (llm-d/llm-d-inference-scheduler `pkg/plugins/scorer/precise_prefix_cache.go`,
 * commit 17abea8, `computeScoresFromKeyToPods`, and `utils.go`, commit 2202f3c, `indexedScoresToNormalizedScoredPods`,
 * read 2026-12-06): each pod's score is the length of its consecutive run of the prompt's block keys from the first,
 * by the index its engines' KV events keep; the pods holding at least the first block are min-max normalized among
 * themselves (all 1 when they hold equally much, so a lone holder scores 1 however little it holds), and a pod
 * holding none scores 0. So, unlike the approximate scorer's share of the prompt, a pod holding a shorter run than
 * the longest holder scores 0 too. The run is the candidate's overlap (KvLoadCandidates with the engine-cache source).
 */
export function precisePrefixScorer(weight: number): Scorer<KvLoadCandidate, KvLoadFacts> {
  return {
    kind: 'scorer',
    name: 'precise-prefix-cache',
    weight,
    score(candidates, _facts, scores) {
      let min = Infinity;
      let max = 0;
      for (const c of candidates) {
        if (c.overlapBlocks <= 0) continue;
        if (c.overlapBlocks < min) min = c.overlapBlocks;
        if (c.overlapBlocks > max) max = c.overlapBlocks;
      }
      for (let i = 0; i < candidates.length; i++) {
        const blocks = candidates[i].overlapBlocks;
        scores[i] = blocks <= 0 ? 0 : max === min ? 1 : (blocks - min) / (max - min);
      }
    },
  };
}
