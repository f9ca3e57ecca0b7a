import type { KvLoadCandidate } from './kv-load-candidates';
import type { Scorer } from './stage';

/**
 * llm-d's kv-cache-utilization scorer: 1 − the pod's KV cache usage. Usage here is the KV blocks of the requests
 * this router has in flight there over the pod's capacity (`kvCapacityTokens`, else `defaultKvCapacityTokens`):
 * the pod's own vllm:kv_cache_usage_perc is not in the instance view.
 */
export function kvUtilizationScorer(
  weight: number,
  tokensPerBlock: number,
  defaultKvCapacityTokens: number,
): Scorer<KvLoadCandidate, unknown> {
  return {
    kind: 'scorer',
    name: 'kv-cache-utilization',
    weight,
    score(candidates, _facts, scores) {
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[i];
        const capacity = c.view.kvCapacityTokens ?? defaultKvCapacityTokens;
        scores[i] = 1 - Math.min(1, (c.activeDecodeBlocks * tokensPerBlock) / capacity);
      }
    },
  };
}
