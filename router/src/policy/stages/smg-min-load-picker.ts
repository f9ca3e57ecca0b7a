import type { SmgCandidate } from './smg-tree-candidates';
import type { Picker } from './stage';

/** The least-loaded candidate: fewest requests in flight, then fewest sent, then first (the gateway's min-load key). */
export function leastLoadedOf(candidates: readonly SmgCandidate[]): SmgCandidate {
  let best = candidates[0];
  for (let i = 1; i < candidates.length; i++) {
    const c = candidates[i];
    if (
      c.view.inFlight < best.view.inFlight ||
      (c.view.inFlight === best.view.inFlight && c.processed < best.processed)
    )
      best = c;
  }
  return best;
}

/** A request whose match rate is not above the threshold goes to the least-loaded candidate (the gateway's miss branch). */
export function smgMinLoadPicker<Reason extends string>(reason: Reason): Picker<SmgCandidate, Reason, unknown> {
  return {
    kind: 'picker',
    name: 'smg-min-load',
    pick: (candidates) => ({ instance: leastLoadedOf(candidates).view.id, reason }),
  };
}
