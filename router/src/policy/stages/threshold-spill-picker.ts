import { InstanceHashCache, ranksAbove, rendezvousScore } from '../rendezvous';
import type { InstanceView } from '../routing-policy';
import type { Picker } from './stage';
import type { PrefixKeyFacts } from './prefix-affinity-picker';

/**
 * The candidate with the fewest requests in flight (the most spare capacity), ties broken by rendezvous rank for
 * the prefix key, then id, so replicas agree and a spilled prefix keeps landing on the same second choice. Its
 * reason says whether it is under `threshold` (`spilled`) or every candidate is at or over it (`saturated`):
 * the router never queues or rejects, like SageMaker's endpoint, which keeps accepting requests.
 */
export function thresholdSpillPicker<Spilled extends string, Saturated extends string>(
  threshold: number,
  reasons: { readonly spilled: Spilled; readonly saturated: Saturated },
  hashes: InstanceHashCache,
): Picker<InstanceView, Spilled | Saturated, PrefixKeyFacts> {
  return {
    kind: 'picker',
    name: 'threshold-spill',
    pick(candidates, _scores, { key }) {
      let least = candidates[0];
      let leastScore = rendezvousScore(key, hashes.get(least.id));
      for (let i = 1; i < candidates.length; i++) {
        const c = candidates[i];
        if (c.inFlight > least.inFlight) continue;
        const score = rendezvousScore(key, hashes.get(c.id));
        if (c.inFlight < least.inFlight || ranksAbove(score, c.id, leastScore, least.id)) {
          least = c;
          leastScore = score;
        }
      }
      return { instance: least.id, reason: least.inFlight < threshold ? reasons.spilled : reasons.saturated };
    },
  };
}
