import type { Rng } from '../../common/seeded-rng';
import type { InstanceView } from '../routing-policy';
import type { Picker } from './stage';

const floor = Math.floor; // one global lookup (see hashing.ts)

/** A uniformly random candidate: exactly one draw from the injected Rng per decision. */
export function randomPicker<Reason extends string>(rng: Rng, reason: Reason): Picker<InstanceView, Reason, unknown> {
  return {
    kind: 'picker',
    name: 'random',
    pick: (candidates) => ({ instance: candidates[floor(rng.next() * candidates.length)].id, reason }),
  };
}
