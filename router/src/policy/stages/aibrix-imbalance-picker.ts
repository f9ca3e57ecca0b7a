import type { Rng } from '../../common/seeded-rng';
import type { AibrixCandidate } from './aibrix-prefix-table';
import type { Picker } from './stage';
import { randomLeastLoaded } from './aibrix-least-request-picker';

/**
 * AIBrix's imbalance guard: when the most and the least loaded pods differ by more than `absCount` requests in
 * flight, a random least-loaded pod, whatever it holds (reason `aibrix-imbalance`).
 */
export function aibrixImbalancePicker(
  absCount: number,
  rng: Rng,
): Picker<AibrixCandidate, 'aibrix-imbalance', unknown> {
  return {
    kind: 'picker',
    name: 'aibrix-imbalance',
    pick(candidates) {
      let min = Infinity;
      let max = -Infinity;
      for (const c of candidates) {
        if (c.view.inFlight < min) min = c.view.inFlight;
        if (c.view.inFlight > max) max = c.view.inFlight;
      }
      if (max - min <= absCount) return undefined;
      return { instance: randomLeastLoaded(candidates, rng).view.id, reason: 'aibrix-imbalance' };
    },
  };
}
