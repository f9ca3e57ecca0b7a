import type { CostCandidate } from './predicted-cost-candidates';
import type { PrefixMemory } from './prefix-memory';
import type { Filter } from './stage';

/**
 * Bounded loads (Mirrokni, Thorup, Zadimoghaddam, "Consistent Hashing with Bounded Loads", 2018): an instance
 * with more than this × its share of the requests is passed over; 1.25 is the balance factor HAProxy suggests for
 * its bounded-load hashing.
 */
export const BALANCE_FACTOR = 1.25;

/**
 * Bounded load in requests sent (Mirrokni et al. on request counts): when some candidate holds part of the prompt,
 * an instance this router has sent more than BALANCE_FACTOR × its share of its requests is passed over while any
 * other is not, whatever it holds. It stays over only until the others catch up, so a hot prefix spreads to the
 * next instance (which then holds it too) instead of fixing each instance's share by how popular its cached
 * prefixes happen to be. Cold prompts are exempt: rendezvous order, bounded by index contents, is what replicas
 * agree on.
 */
export function overShareFilter(memory: PrefixMemory): Filter<CostCandidate, unknown> {
  return {
    kind: 'filter',
    name: 'over-share',
    filter(candidates) {
      if (!candidates.some((c) => c.matchedBlocks > 0)) return candidates;
      let total = 0;
      let totalWeight = 0;
      for (const c of candidates) {
        total += memory.sentTo(c.view.id);
        totalWeight += c.weight;
      }
      // The paper's capacity ⌈(1 + ε)(m + 1)/n⌉ (weighted: × the instance's weight over the mean weight), never
      // below 1/ε requests: until an instance's share is that many requests, one request moves it by more than ε,
      // so a young router does not yet pass over what an instance holds.
      const bound = (c: CostCandidate) =>
        Math.max(
          Math.ceil((BALANCE_FACTOR * (total + 1) * c.weight) / totalWeight),
          Math.ceil(1 / (BALANCE_FACTOR - 1)),
        );
      const under = (c: CostCandidate) => memory.sentTo(c.view.id) + 1 <= bound(c);
      const passed = candidates.filter(under);
      return passed.length === 0 || passed.length === candidates.length ? candidates : passed;
    },
  };
}
