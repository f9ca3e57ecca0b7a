import type { Rng } from '../../common/seeded-rng';
import type { InstanceView } from '../routing-policy';
import type { Picker } from './stage';

const floor = Math.floor; // one global lookup (see hashing.ts)

/**
 * The candidate with the highest weighted score; ties broken uniformly at random with the injected Rng, which is
 * drawn from only when there is a tie (llm-d's max-score picker also picks among equal scores at random).
 */
export function maxScorePicker<Reason extends string>(rng: Rng, reason: Reason): Picker<InstanceView, Reason, unknown> {
  return {
    kind: 'picker',
    name: 'max-score',
    pick(candidates, scores) {
      let max = -Infinity;
      let ties = 0;
      let best = 0;
      for (let i = 0; i < candidates.length; i++) {
        if (scores[i] > max) {
          max = scores[i];
          ties = 1;
          best = i;
        } else if (scores[i] === max) {
          ties++;
        }
      }
      if (ties === 1) return { instance: candidates[best].id, reason }; // no tie: one pass, no draw
      let pick = floor(rng.next() * ties);
      for (let i = best; i < candidates.length; i++) {
        if (scores[i] !== max) continue;
        if (pick === 0) return { instance: candidates[i].id, reason };
        pick--;
      }
      return undefined; // unreachable: `ties` candidates matched above
    },
  };
}
