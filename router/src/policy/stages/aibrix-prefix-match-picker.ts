import type { Rng } from '../../common/seeded-rng';
import type { AibrixCandidate } from './aibrix-prefix-table';
import type { Picker } from './stage';

/**
 * AIBrix's match-then-load order: the matched pods, shuffled then stably sorted by match percent (highest first)
 * and requests in flight (fewest first); the first whose load is at most the mean + `stdDevFactor` × the standard
 * deviation of every pod's load wins (reason `aibrix-prefix-match`). None matched or none within: no choice.
 */
export function aibrixPrefixMatchPicker(
  stdDevFactor: number,
  rng: Rng,
): Picker<AibrixCandidate, 'aibrix-prefix-match', unknown> {
  return {
    kind: 'picker',
    name: 'aibrix-prefix-match',
    pick(candidates) {
      const matched = candidates.filter((c) => c.matchPercent > 0);
      if (matched.length === 0) return undefined;
      for (let i = matched.length - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [matched[i], matched[j]] = [matched[j], matched[i]];
      }
      matched.sort((a, b) => b.matchPercent - a.matchPercent || a.view.inFlight - b.view.inFlight);
      let sum = 0;
      for (const c of candidates) sum += c.view.inFlight;
      const mean = sum / candidates.length;
      let squares = 0;
      for (const c of candidates) squares += (c.view.inFlight - mean) ** 2;
      const limit = mean + stdDevFactor * Math.sqrt(squares / candidates.length);
      const chosen = matched.find((c) => c.view.inFlight <= limit);
      return chosen === undefined ? undefined : { instance: chosen.view.id, reason: 'aibrix-prefix-match' };
    },
  };
}
