import { InstanceHashCache, ranksAbove, rendezvousScore } from '../rendezvous';
import type { InstanceView } from '../routing-policy';
import type { DecisionFacts, Picker } from './stage';

/** The facts of a policy that routes by a request's prefix key (SageMaker's PREFIX_AWARE). */
export interface PrefixKeyFacts extends DecisionFacts {
  /** The request's 32-bit prefix key (policy/prefix-key.ts). */
  readonly key: number;
}

/**
 * The candidate first in rendezvous order for the request's prefix key, when it has fewer than `threshold`
 * requests in flight; otherwise no choice (the next picker spills). Replicas with the same view agree.
 */
export function prefixAffinityPicker<Reason extends string>(
  threshold: number,
  reason: Reason,
  hashes: InstanceHashCache,
): Picker<InstanceView, Reason, PrefixKeyFacts> {
  return {
    kind: 'picker',
    name: 'prefix-affinity',
    pick(candidates, _scores, { key }) {
      let affinity = candidates[0];
      let affinityScore = rendezvousScore(key, hashes.get(affinity.id));
      for (let i = 1; i < candidates.length; i++) {
        const score = rendezvousScore(key, hashes.get(candidates[i].id));
        if (ranksAbove(score, candidates[i].id, affinityScore, affinity.id)) {
          affinity = candidates[i];
          affinityScore = score;
        }
      }
      return affinity.inFlight < threshold ? { instance: affinity.id, reason } : undefined;
    },
  };
}
