import type { Rng } from '../../common/seeded-rng';
import type { AibrixCandidate } from './aibrix-prefix-table';
import type { Picker } from './stage';

/** A uniformly random candidate among those with the fewest requests in flight (one draw only on a tie). */
export function randomLeastLoaded(candidates: readonly AibrixCandidate[], rng: Rng): AibrixCandidate {
  let min = Infinity;
  for (const c of candidates) if (c.view.inFlight < min) min = c.view.inFlight;
  const least = candidates.filter((c) => c.view.inFlight === min);
  return least.length === 1 ? least[0] : least[Math.floor(rng.next() * least.length)];
}

/** The fallback: a random pod among those with the fewest requests in flight (reason `aibrix-least-request`). */
export function aibrixLeastRequestPicker(rng: Rng): Picker<AibrixCandidate, 'aibrix-least-request', unknown> {
  return {
    kind: 'picker',
    name: 'aibrix-least-request',
    pick: (candidates) => ({ instance: randomLeastLoaded(candidates, rng).view.id, reason: 'aibrix-least-request' }),
  };
}
