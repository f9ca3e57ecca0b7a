import type { Rng } from '../../common/seeded-rng';
import type { TrieCandidate } from './hash-trie-candidates';
import type { Picker } from './stage';

/** A uniformly random candidate among those holding the longest match: one Rng draw per decision. */
export function randomLongestPicker<Reason extends string>(
  rng: Rng,
  reason: Reason,
): Picker<TrieCandidate, Reason, unknown> {
  return {
    kind: 'picker',
    name: 'random-longest',
    pick(candidates) {
      const longest = candidates.filter((c) => c.longest);
      return { instance: longest[Math.floor(rng.next() * longest.length)].view.id, reason };
    },
  };
}
